;;; action-driver.el --- the code action "Revert this change" with rewind-ls.el loaded  -*- lexical-binding: t -*-
;; (issue 36 item 3) The client's own code-action commands (lsp-mode: `lsp-execute-code-action';
;; eglot: `eglot-code-actions', its completing-read answered), the person scripted as in package-driver.el.
;; The package is loaded as its README says (load path + require) and nothing else: no lsp-mode or
;; eglot setup, the package starts the connection itself. Only the person is scripted: what they type
;; at `completing-read' and `read-multiple-choice' (recorded with the question), and the driver
;; records buffers, files, the preview buffer and messages in a JSON file for the Python test.
(require 'json)
(require 'cl-lib)
(require 'rewind-ls)

(defvar pd-root (file-name-as-directory (getenv "RT_ROOT")))
(defvar pd-out (getenv "RT_OUT"))
(defvar pd-answers nil "Answers: strings for completing-read, characters for read-multiple-choice.")
(defvar pd-questions nil)
(defvar pd-messages nil)
(defvar pd-steps nil)

(advice-add 'completing-read :override
            (lambda (prompt collection &rest _)
              (let ((answer (pop pd-answers)))
                (push (list (cons 'prompt prompt) (cons 'choices (vconcat collection))
                            (cons 'answer answer))
                      pd-questions)
                answer)))
(advice-add 'read-multiple-choice :override
            (lambda (prompt choices &rest _)
              (let* ((key (pop pd-answers))
                     (choice (assq key choices)))
                (push (list (cons 'prompt prompt)
                            (cons 'choices (vconcat (mapcar #'cadr choices)))
                            (cons 'answer (cadr choice))
                            (cons 'preview (let ((b (get-buffer "*rewind-preview*")))
                                             (and b (with-current-buffer b (buffer-string))))))
                      pd-questions)
                (or choice (error "driver: %S is not one of %S" key choices)))))
(advice-add 'message :around
            (lambda (orig fmt &rest args)
              (when fmt (push (apply #'format fmt args) pd-messages))
              (apply orig fmt args)))

(defun pd-disk (rel)
  (let ((path (expand-file-name rel pd-root)))
    (and (file-exists-p path)
         (with-temp-buffer (insert-file-contents-literally path) (buffer-string)))))

(defun pd-step (name)
  (let ((b (get-file-buffer (expand-file-name "a.txt" pd-root)))
        (preview (get-buffer "*rewind-preview*")))
    (push (list (cons 'step name)
                (cons 'disk_a (pd-disk "a.txt"))
                (cons 'disk_b (pd-disk "b.txt"))
                (cons 'buffer_a (and b (with-current-buffer b (buffer-string))))
                (cons 'modified_a (and b (buffer-modified-p b)))
                (cons 'preview (and preview (with-current-buffer preview (buffer-string))))
                (cons 'preview_mode (and preview (symbol-name (buffer-local-value 'major-mode preview)))))
          pd-steps)))

(defun pd-finish (failure)
  (with-temp-file pd-out
    (insert (json-encode (list (cons 'failure failure)
                               (cons 'steps (vconcat (reverse pd-steps)))
                               (cons 'questions (vconcat (reverse pd-questions)))
                               (cons 'messages (vconcat (reverse pd-messages)))))))
  (kill-emacs 0))

(defvar ad-confirms nil "Questions asked with `y-or-n-p' (eglot's \"Server wants to edit\").")
(advice-add 'y-or-n-p :around
            (lambda (orig prompt &rest args)
              (push prompt ad-confirms)
              (push (format "y-or-n-p: %s" prompt) pd-messages)
              (apply orig prompt args)))

(defun ad-snapshot (name)
  (let ((b (get-file-buffer (expand-file-name "a.txt" pd-root))))
    (push (list (cons 'step name)
                (cons 'disk_a (pd-disk "a.txt"))
                (cons 'buffer_a (and b (with-current-buffer b (buffer-string))))
                (cons 'modified_a (and b (buffer-modified-p b))))
          pd-steps)))

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
