;;; rewind-eglot.el --- rewind-ls in eglot  -*- lexical-binding: t -*-
;; Tested with Emacs 28.2 and eglot 1.9 (Debian 12: emacs-nox, elpa-eglot) by
;; tests/editors/test_emacs.py; docs/client-contract.md shows this file.
;; eglot runs one server per major mode and project: list the modes rewind-ls should watch
;; (modes that already have a language server in eglot cannot have rewind-ls too: use lsp-mode).
;; eglot 1.9 shows no code lenses: use the commands below.
(require 'eglot)

(add-to-list 'eglot-server-programs '((text-mode) . ("rewind-ls" "serve")))

(defun rewind-ls--command (command &rest args)
  (eglot-execute-command (eglot-current-server) command (vconcat args)))

(defun rewind-ls-rewind (turn)
  "Rewind the files to the start of TURN (a number of the current session, or an id)."
  (interactive "sRewind to the start of turn: ")
  (rewind-ls--command 'rewind.rewind turn))

(defun rewind-ls-undo ()
  "Undo the last rewind, revert or undo."
  (interactive)
  (rewind-ls--command 'rewind.undo))

(defun rewind-ls-diff (turn)
  "Show what TURN changed (as a message: eglot 1.9 cannot show a server's document)."
  (interactive "sDiff of turn: ")
  (rewind-ls--command 'rewind.diff turn))

(defun rewind-ls-timeline ()
  "Show the rewind-ls timeline (read it, then use the commands above)."
  (interactive)
  (let* ((server (eglot-current-server))
         (result (jsonrpc-request server :rewind/timeline (make-hash-table)))
         (file (eglot--uri-to-path (plist-get result :uri)))
         (buffer (or (get-file-buffer file) (find-file-noselect file))))
    (with-current-buffer buffer
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (plist-get result :text)))
      (set-buffer-modified-p nil)
      (setq buffer-read-only t)
      (unless (derived-mode-p 'text-mode) (text-mode)))
    (pop-to-buffer buffer)))
