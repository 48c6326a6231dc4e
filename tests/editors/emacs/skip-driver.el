;;; skip-driver.el --- a rewind that skips a conflicting unsaved buffer, rewind-ls.el in batch Emacs  -*- lexical-binding: t -*-
;; (issue 36 item 9) The person scripted by person.el.
(load (expand-file-name "person.el" (file-name-directory load-file-name)) nil t)

(condition-case err
    (progn
      (find-file (expand-file-name "a.txt" pd-root))
      ;; The person types in a.txt and does not save.
      (goto-char (point-min))
      (insert "mine\n")
      ;; M-x rewind-ls-rewind #1 over it: a conflict; skip it (b.txt is restored, a.txt left alone).
      (setq pd-answers (list "#1" ?s))
      (call-interactively #'rewind-ls-rewind)
      (pd-step "skipped")
      (pd-finish nil))
  (error (pd-finish (format "%S" err))))
