;;; history-driver.el --- drives rewind-ls-history.el in batch Emacs  -*- lexical-binding: t -*-
;; M-x rewind-ls-file-history on a.txt: the person's answers scripted (the version by its hash, then
;; the preview's question), what was asked, the files and buffer recorded in a JSON file.
(require 'json)
(require 'cl-lib)
(require 'rewind-ls-history)

(defvar hd-root (file-name-as-directory (getenv "RT_ROOT")))
(defvar hd-out (getenv "RT_OUT"))
(defvar hd-answers nil)
(defvar hd-questions nil)
(defvar hd-messages nil)
(defvar hd-steps nil)

(advice-add 'completing-read :override
            (lambda (prompt collection &rest _)
              (let* ((want (pop hd-answers))
                     (answer (cl-find-if (lambda (c) (string-match-p (regexp-quote want) c))
                                         collection)))
                (push (list (cons 'prompt prompt) (cons 'choices (vconcat collection))
                            (cons 'answer answer))
                      hd-questions)
                answer)))
(advice-add 'read-multiple-choice :override
            (lambda (prompt choices &rest _)
              (let ((choice (assq (pop hd-answers) choices)))
                (push (list (cons 'prompt prompt) (cons 'choices (vconcat (mapcar #'cadr choices))))
                      hd-questions)
                (or choice (error "driver: no such choice in %S" choices)))))
(advice-add 'message :around
            (lambda (orig fmt &rest args)
              (when fmt (push (apply #'format fmt args) hd-messages))
              (apply orig fmt args)))

(defun hd-step (name)
  (let ((path (expand-file-name "a.txt" hd-root))
        (b (get-file-buffer (expand-file-name "a.txt" hd-root))))
    (push (list (cons 'step name)
                (cons 'disk (with-temp-buffer (insert-file-contents-literally path) (buffer-string)))
                (cons 'buffer (and b (with-current-buffer b (buffer-string))))
                (cons 'modified (and b (buffer-modified-p b))))
          hd-steps)))

(defun hd-finish (failure)
  (with-temp-file hd-out
    (insert (json-encode (list (cons 'failure failure)
                               (cons 'steps (vconcat (reverse hd-steps)))
                               (cons 'questions (vconcat (reverse hd-questions)))
                               (cons 'messages (vconcat (reverse hd-messages)))))))
  (kill-emacs 0))

(condition-case err
    (progn
      (find-file (expand-file-name "a.txt" hd-root))
      (setq hd-answers (list (getenv "RT_VERSION") ?y))
      (call-interactively #'rewind-ls-file-history)
      (hd-step "restored")
      (setq hd-answers (list ?y))
      (call-interactively #'rewind-ls-undo)
      (hd-step "undone")
      (hd-finish nil))
  (error (hd-finish (format "%S" err))))
