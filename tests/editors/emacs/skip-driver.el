;;; skip-driver.el --- a rewind that skips a conflicting unsaved buffer, rewind-ls.el in batch Emacs  -*- lexical-binding: t -*-
;; (issue 36 item 9) The same person-level scripting as package-driver.el.
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
