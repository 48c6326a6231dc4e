;;; package-driver.el --- drives editors/emacs/rewind-ls.el in batch Emacs  -*- lexical-binding: t -*-
;; The package is loaded as its README says (load path + require) and nothing else: the package
;; starts the connection itself. The person is scripted by person.el.
(load (expand-file-name "person.el" (file-name-directory load-file-name)) nil t)

(condition-case err
    (progn
      (find-file (expand-file-name "a.txt" pd-root))
      ;; M-x rewind-ls-rewind: the turn by its own number, then the preview's question: cancel.
      (setq pd-answers (list "#1" ?q))
      (call-interactively #'rewind-ls-rewind)
      (pd-step "cancelled")
      ;; Again, yes.
      (setq pd-answers (list "#1" ?y))
      (call-interactively #'rewind-ls-rewind)
      (pd-step "rewound")
      ;; M-x rewind-ls-undo, yes.
      (setq pd-answers (list ?y))
      (call-interactively #'rewind-ls-undo)
      (pd-step "undone")
      ;; M-x rewind-ls: the picker, then diff.
      (setq pd-answers (list "#2" ?d))
      (call-interactively #'rewind-ls)
      (push (list (cons 'step "diff")
                  (cons 'text (with-current-buffer "*rewind-diff #2*" (buffer-string)))
                  (cons 'mode (with-current-buffer "*rewind-diff #2*" (symbol-name major-mode))))
            pd-steps)
      ;; M-x rewind-ls-timeline, RET on turn 2's line: the lenses' choices from the keyboard.
      (rewind-ls-timeline)
      (with-current-buffer "*rewind-timeline*"
        (goto-char (point-min))
        (search-forward "second: a and a new b")
        (kill-buffer "*rewind-diff #2*")
        (setq pd-answers (list ?d))
        (call-interactively #'rewind-ls-timeline-act))
      (push (list (cons 'step "timeline-diff")
                  (cons 'text (with-current-buffer "*rewind-diff #2*" (buffer-string))))
            pd-steps)
      (pd-finish nil))
  (error (pd-finish (format "%S" err))))
