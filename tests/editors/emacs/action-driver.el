;;; action-driver.el --- the code action "Revert this change" with rewind-ls.el loaded  -*- lexical-binding: t -*-
;; (issue 36 item 3) The client's own code-action commands (lsp-mode: `lsp-execute-code-action';
;; eglot: `eglot-code-actions', its completing-read answered), the person scripted as in person.el.
(load (expand-file-name "person.el" (file-name-directory load-file-name)) nil t)
(pd-record-confirms)

(condition-case err
    (progn
      (find-file (expand-file-name "a.txt" pd-root))
      ;; A command first: it starts the connection (the package's own way).
      (rewind-ls--turns)
      (goto-char (point-min))
      (forward-line 14)  ; "FIFTEEN": hunk 2 of 3 of turn 1
      (pcase (rewind-ls--backend)
        ('lsp
         (setq pd-answers (list ?y))
         (lsp-execute-code-action
          (cl-find-if (lambda (a) (string-prefix-p "Revert this change" (lsp-get a :title)))
                      (lsp-code-actions-at-point))))
        ('eglot
         (setq pd-answers (list "Revert this change (turn 1: make the numbers words)" ?y))
         (let ((last-nonmenu-event ?\r))
           (eglot-code-actions (point) (point) nil t))))
      (ad-snapshot "reverted")
      (setq pd-answers (list ?y))
      (call-interactively #'rewind-ls-undo)
      (ad-snapshot "undone")
      (pd-finish nil))
  (error (pd-finish (format "%S" err))))
