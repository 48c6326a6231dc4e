;;; person.el --- the scripted person the package drivers share  -*- lexical-binding: t -*-
;; Loaded first by each *-driver.el: the package loaded as its README says, what the person types at
;; `completing-read' and `read-multiple-choice' (recorded with the question), the messages, and the
;; steps recorded in the JSON file the Python test reads (`pd-finish').
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

(defun pd-record-confirms ()
  "Record every `y-or-n-p' question (and answer it as Emacs would)."
  (advice-add 'y-or-n-p :around
              (lambda (orig prompt &rest args)
                (push prompt ad-confirms)
                (push (format "y-or-n-p: %s" prompt) pd-messages)
                (apply orig prompt args))))

(defun ad-snapshot (name)
  (let ((b (get-file-buffer (expand-file-name "a.txt" pd-root))))
    (push (list (cons 'step name)
                (cons 'disk_a (pd-disk "a.txt"))
                (cons 'buffer_a (and b (with-current-buffer b (buffer-string))))
                (cons 'modified_a (and b (buffer-modified-p b))))
          pd-steps)))
