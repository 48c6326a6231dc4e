;;; unsaved-driver.el --- an undo over an unsaved buffer, rewind-ls.el in batch Emacs  -*- lexical-binding: t -*-
;; (issue 36 item 4) The person scripted by person.el.
(load (expand-file-name "person.el" (file-name-directory load-file-name)) nil t)

(condition-case err
    (progn
      (find-file (expand-file-name "a.txt" pd-root))
      ;; The person types in a.txt and does not save.
      (goto-char (point-min))
      (insert "mine\n")
      (pd-step "typed")
      ;; M-x rewind-ls-rewind #1 over it: a conflict (the unsaved text); overwrite.
      (setq pd-answers (list "#1" ?o))
      (call-interactively #'rewind-ls-rewind)
      (pd-step "rewound")
      ;; M-x rewind-ls-undo: the unsaved text comes back unsaved, the disk as it was.
      (setq pd-answers (list ?y))
      (call-interactively #'rewind-ls-undo)
      (pd-step "undone")
      (pd-finish nil))
  (error (pd-finish (format "%S" err))))
