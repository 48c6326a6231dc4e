;;; newcomer-driver.el --- the whole path a newcomer takes, rewind-ls.el loaded  -*- lexical-binding: t -*-
;; (issue 36, done-when: review, rewind, undo, revert one change, undo, a conflict on undo) The client's own code-action commands (lsp-mode: `lsp-execute-code-action';
;; eglot: `eglot-code-actions', its completing-read answered), the person scripted as in person.el.
(load (expand-file-name "person.el" (file-name-directory load-file-name)) nil t)
(pd-record-confirms)

(defun nd-undo (answer)
  (setq pd-answers (list answer))
  (call-interactively #'rewind-ls-undo))

(condition-case err
    (progn
      (find-file (expand-file-name "a.txt" pd-root))
      ;; Review turn 1: M-x rewind-ls, #1, diff.
      (setq pd-answers (list "#1" ?d))
      (call-interactively #'rewind-ls)
      (ad-snapshot "reviewed")
      ;; Rewind to turn 1, then undo.
      (setq pd-answers (list "#1" ?y))
      (call-interactively #'rewind-ls-rewind)
      (ad-snapshot "rewound")
      (nd-undo ?y)
      (ad-snapshot "undone")
      ;; Revert one change: the code action on FIFTEEN.
      (with-current-buffer (get-file-buffer (expand-file-name "a.txt" pd-root))
        (goto-char (point-min))
        (forward-line 14)
        (pcase (rewind-ls--backend)
          ('lsp
           (setq pd-answers (list ?y))
           (lsp-execute-code-action
            (cl-find-if (lambda (a) (string-prefix-p "Revert this change" (lsp-get a :title)))
                        (lsp-code-actions-at-point))))
          ('eglot
           (setq pd-answers (list "Revert this change (turn 1: make the numbers words)" ?y))
           (let ((last-nonmenu-event ?\r))
             (eglot-code-actions (point) (point) nil t)))))
      (ad-snapshot "reverted")
      (nd-undo ?y)
      (ad-snapshot "revert-undone")
      ;; A conflict on undo: rewind, the person saves an edit, the undo asks: overwrite.
      (setq pd-answers (list "#1" ?y))
      (call-interactively #'rewind-ls-rewind)
      (with-current-buffer (get-file-buffer (expand-file-name "a.txt" pd-root))
        (goto-char (point-min))
        (insert "mine\n")
        (save-buffer))
      (ad-snapshot "saved-mine")
      (nd-undo ?o)
      (ad-snapshot "overwritten")
      ;; Nothing lost: the undo of that undo brings the save back, its undo the agent's state.
      (nd-undo ?y)
      (ad-snapshot "mine-back")
      (nd-undo ?y)
      (ad-snapshot "end")
      (pd-finish nil))
  (error (pd-finish (format "%S" err))))
