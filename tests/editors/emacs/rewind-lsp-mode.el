;;; rewind-lsp-mode.el --- rewind-ls in lsp-mode  -*- lexical-binding: t -*-
;; Tested with Emacs 28.2 and lsp-mode 8.0.0 (Debian 12: emacs-nox, elpa-lsp-mode) by
;; tests/editors/test_emacs.py; docs/client-contract.md shows this file.
(require 'lsp-mode)
(require 'lsp-lens)

(lsp-register-client
 (make-lsp-client
  :new-connection (lsp-stdio-connection '("rewind-ls" "serve"))
  ;; Every file of the workspace: a restore compares each open buffer before it writes.
  :activation-fn (lambda (_file _mode) t)
  :add-on? t                            ; beside the language's own server
  :server-id 'rewind-ls))

(defun rewind-ls-timeline ()
  "Show the rewind-ls timeline; its lenses rewind, revert or diff a turn (each asks first)."
  (interactive)
  (let* ((result (lsp-request "rewind/timeline" (make-hash-table)))
         ;; A name inside the workspace that is never written: lsp-mode keeps it with this server.
         (file (lsp--uri-to-path (lsp-get result :uri)))
         (buffer (or (get-file-buffer file) (find-file-noselect file))))
    (with-current-buffer buffer
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (lsp-get result :text)))
      (set-buffer-modified-p nil)
      (setq buffer-read-only t)
      (unless (derived-mode-p 'text-mode) (text-mode))
      (unless (bound-and-true-p lsp-mode) (lsp))
      (lsp-lens-mode 1))
    (pop-to-buffer buffer)))

(defun rewind-ls-rewind (turn)
  "Rewind the files to the start of TURN (a number of the current session, or an id)."
  (interactive "sRewind to the start of turn: ")
  (lsp-send-execute-command "rewind.rewind" (vector turn)))

(defun rewind-ls-undo ()
  "Undo the last rewind, revert or undo."
  (interactive)
  (lsp-send-execute-command "rewind.undo" []))

(defun rewind-ls-diff (turn)
  "Show what TURN changed."
  (interactive "sDiff of turn: ")
  (lsp-send-execute-command "rewind.diff" (vector turn)))
