;;; progress-driver.el --- the first checkpoint's progress in editors/emacs/rewind-ls.el  -*- lexical-binding: t -*-
;; A worker is taking the first checkpoint (the Python test holds its lock, pid RT_WORKER_PID, and
;; wrote its progress file RT_PROGRESS). The driver runs commands as a person would, moves the
;; worker on (rewrites the progress file), then ends it (kills the lock holder), and records what
;; the mode line, the turn prompt and the timeline's header line say at each step.
(require 'json)
(require 'cl-lib)
(require 'rewind-ls)

(defvar pd-root (file-name-as-directory (getenv "RT_ROOT")))
(defvar pd-out (getenv "RT_OUT"))
(defvar pd-prompts nil)
(defvar pd-messages nil)
(defvar pd-steps nil)

(advice-add 'completing-read :override
            (lambda (prompt &rest _) (push prompt pd-prompts) "#1"))
(advice-add 'message :around
            (lambda (orig fmt &rest args)
              (when fmt (push (apply #'format fmt args) pd-messages))
              (apply orig fmt args)))

(defun pd-render (construct)
  "CONSTRUCT as the mode line shows it: batch Emacs has no display, so `format-mode-line'
answers \"\"; strings, symbols (their values) and lists, the forms the package uses."
  (cond ((stringp construct) construct)
        ((and construct (symbolp construct) (boundp construct)) (pd-render (symbol-value construct)))
        ;; (SYMBOL THEN ELSE) is a conditional, as in xdisp.c: no THEN is "*invalid*".
        ((and (consp construct) (symbolp (car construct)) (car construct))
         (if (and (boundp (car construct)) (symbol-value (car construct)))
             (if (consp (cdr construct)) (pd-render (cadr construct)) "*invalid*")
           (if (consp (cddr construct)) (pd-render (caddr construct)) "")))
        ((consp construct) (mapconcat #'pd-render construct ""))
        (t "")))

(defun pd-mode-line ()
  (with-current-buffer (get-file-buffer (expand-file-name "a.txt" pd-root))
    ;; What Emacs' default mode line shows of the global part (`mode-line-misc-info').
    (cl-assert (memq 'global-mode-string (flatten-tree mode-line-misc-info)))
    (pd-render global-mode-string)))

(defun pd-header ()
  (let ((timeline (get-buffer "*rewind-timeline*")))
    (and timeline (with-current-buffer timeline (pd-render header-line-format)))))

(defun pd-step (name)
  (push (list (cons 'step name) (cons 'mode_line (pd-mode-line)) (cons 'header (pd-header)))
        pd-steps))

(defun pd-until (what pred)
  "Let timers and the server run until PRED holds (30 s at most)."
  (let ((deadline (+ (float-time) 30)))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless (funcall pred) (error "driver: timed out waiting for %s: %S" what (pd-mode-line)))))

(defun pd-finish (failure)
  (with-temp-file pd-out
    (insert (json-encode (list (cons 'failure failure)
                               (cons 'steps (vconcat (reverse pd-steps)))
                               (cons 'prompts (vconcat (reverse pd-prompts)))
                               (cons 'messages (vconcat (reverse pd-messages)))))))
  (kill-emacs 0))

(condition-case err
    (progn
      (setq rewind-ls-baseline-poll 0.2)
      (find-file (expand-file-name "a.txt" pd-root))
      (pd-step "opened")
      ;; M-x rewind-ls-diff: the turn prompt, then the diff.
      (call-interactively #'rewind-ls-diff)
      (rewind-ls-timeline)
      (pd-step "running")
      ;; The worker goes on: the mode line follows without a command.
      (with-temp-file (getenv "RT_PROGRESS") (insert "3000 4000\n"))
      (pd-until "3000/4000" (lambda () (string-match-p "3000/4000" (pd-mode-line))))
      (pd-step "moved on")
      ;; The worker ends: the progress goes away.
      (signal-process (string-to-number (getenv "RT_WORKER_PID")) 'kill)
      (pd-until "the end of the checkpoint"
                (lambda () (not (string-match-p "first checkpoint" (pd-mode-line)))))
      (pd-step "done")
      (pd-finish nil))
  (error (pd-finish (format "%S" err))))
