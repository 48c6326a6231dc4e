;;; browse-driver.el --- drives M-x rewind-ls-browse in batch Emacs  -*- lexical-binding: t -*-
;; The package loaded as its README says (load path + require); `rewind-ls-browse' comes through
;; the autoload rewind-ls.el declares. Only the person is scripted (the turn typed at
;; `completing-read'); the driver records the listing buffers and the file buffer in a JSON file.
(require 'json)
(require 'cl-lib)
(require 'rewind-ls)

(defvar bd-root (file-name-as-directory (getenv "RT_ROOT")))
(defvar bd-out (getenv "RT_OUT"))
(defvar bd-answers nil)
(defvar bd-steps nil)

(advice-add 'completing-read :override (lambda (&rest _) (pop bd-answers)))

(defun bd-step (name)
  (push (list (cons 'step name)
              (cons 'buffer (buffer-name))
              (cons 'text (buffer-string))
              (cons 'mode (symbol-name major-mode))
              (cons 'read_only (and buffer-read-only t))
              (cons 'file (buffer-file-name)))
        bd-steps))

(defun bd-goto (text)
  "Point on the first line containing TEXT."
  (goto-char (point-min))
  (search-forward text)
  (beginning-of-line))

(defun bd-finish (failure)
  (with-temp-file bd-out
    (insert (json-encode (list (cons 'failure failure)
                               (cons 'steps (vconcat (reverse bd-steps)))))))
  (kill-emacs 0))

(condition-case err
    (progn
      (find-file (expand-file-name "top.txt" bd-root))
      (setq bd-answers (list "#1"))
      (call-interactively #'rewind-ls-browse)
      (bd-step "root")
      (bd-goto "src/")
      (rewind-ls-browse-open)
      (bd-step "src")
      (bd-goto "app.py")
      (rewind-ls-browse-open)
      (bd-step "file")
      (quit-window)
      (rewind-ls-browse-up)
      (bd-step "up")
      ;; Turn 2 at its end (a prefix argument).
      (setq bd-answers (list "#2"))
      (let ((current-prefix-arg '(4)))
        (call-interactively #'rewind-ls-browse))
      (bd-step "end")
      (bd-finish nil))
  (error (bd-finish (format "%S" err))))
