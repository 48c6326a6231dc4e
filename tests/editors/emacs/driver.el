;;; driver.el --- drives lsp-mode or eglot in batch Emacs against rewind-ls  -*- lexical-binding: t -*-
;; Loaded after the client's config snippet (rewind-lsp-mode.el or rewind-eglot.el). The client code
;; is the real one; only the person is scripted: `completing-read' (what both clients use to ask a
;; window/showMessageRequest) answers from `rt-answers' and records the question. Every step
;; records what the buffers and the files on disk hold in a JSON file for the Python test.
(require 'json)
(require 'cl-lib)
(require 'subr-x)

(defvar rt-client (intern (getenv "RT_CLIENT")))
(defvar rt-root (file-name-as-directory (getenv "RT_ROOT")))
(defvar rt-out (getenv "RT_OUT"))
(defvar rt-answers nil "Titles to answer the next questions with.")
(defvar rt-questions nil)
(defvar rt-messages nil)
(defvar rt-steps nil)
(defvar rt-log nil)

(defun rt-note (fmt &rest args)
  (let ((line (apply #'format fmt args)))
    (push line rt-log)
    (princ (concat "[driver] " line "\n") #'external-debugging-output)))

(advice-add 'completing-read :override
            (lambda (prompt collection &rest _)
              (let* ((choices (mapcar (lambda (c) (if (consp c) (car c) c)) collection))
                     (answer (or (pop rt-answers) "Cancel")))
                (push (list (cons 'prompt (substring-no-properties prompt))
                            (cons 'choices (vconcat choices))
                            (cons 'answer answer))
                      rt-questions)
                (unless (member answer choices)
                  (error "driver: %S is not one of %S" answer choices))
                answer)))

;; eglot asks again before it applies a server's edit ("Server wants to edit ... Proceed?"), unless
;; `eglot-confirm-server-initiated-edits' is nil: the person says yes, and it is recorded.
(defvar rt-confirms nil)
(advice-add 'y-or-n-p :override
            (lambda (prompt)
              (push (substring-no-properties prompt) rt-confirms)
              t))

(advice-add 'message :around
            (lambda (orig fmt &rest args)
              (when fmt (push (substring-no-properties (apply #'format fmt args)) rt-messages))
              (apply orig fmt args)))

(defun rt-idle ()
  "Send eglot's pending buffer changes, as its idle timer does in an interactive Emacs once the
person stops typing: batch Emacs is never idle. (lsp-mode sends changes at once.)"
  (when (eq rt-client 'eglot)
    (dolist (buffer (buffer-list))
      (with-current-buffer buffer
        (when (and (bound-and-true-p eglot--managed-mode) eglot--recent-changes)
          (eglot--signal-textDocument/didChange))))))

(defun rt-wait (what pred &optional seconds)
  (let ((deadline (+ (float-time) (or seconds 20))))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05)
      (rt-idle))
    (unless (funcall pred) (rt-finish (format "timed out waiting for %s" what)))))

(defun rt-path (rel) (expand-file-name rel rt-root))

(defun rt-disk (rel)
  (let ((path (rt-path rel)))
    (if (file-exists-p path)
        (with-temp-buffer
          (set-buffer-multibyte nil)
          (insert-file-contents-literally path)
          (buffer-string))
      nil)))

(defun rt-buffer-text (rel)
  (let ((b (get-file-buffer (rt-path rel))))
    (if b (with-current-buffer b (buffer-substring-no-properties (point-min) (point-max))) nil)))

(defun rt-snapshot (name &rest extra)
  (push (append (list (cons 'step name)
                      (cons 'disk (cl-loop for f in '("a.txt" "b.txt" "c.txt")
                                           collect (cons f (rt-disk f))))
                      (cons 'buffer_a (rt-buffer-text "a.txt"))
                      (cons 'modified_a (let ((b (get-file-buffer (rt-path "a.txt"))))
                                          (and b (buffer-modified-p b) t))))
                extra)
        rt-steps))

(defun rt-message-seen (regexp)
  (cl-some (lambda (m) (string-match-p regexp m)) rt-messages))

(defun rt-finish (&optional failure)
  (let* ((warnings (get-buffer "*Warnings*"))
         (data (list (cons 'failure (or failure nil))
                     (cons 'steps (vconcat (reverse rt-steps)))
                     (cons 'questions (vconcat (reverse rt-questions)))
                     (cons 'messages (vconcat (reverse rt-messages)))
                     (cons 'log (vconcat (reverse rt-log)))
                     (cons 'confirms (vconcat (reverse rt-confirms)))
                     (cons 'warnings (if warnings
                                         (with-current-buffer warnings (buffer-string))
                                       "")))))
    (with-temp-file rt-out
      (insert (json-encode data)))
    (kill-emacs (if failure 1 0))))

;; --- the two clients ---------------------------------------------------------------------------

(defun rt-start ()
  (find-file (rt-path "a.txt"))
  (pcase rt-client
    ('lsp
     ;; What a package install's autoloads would have loaded.
     (require 'lsp-modeline nil t)
     (require 'lsp-headerline nil t)
     (setq lsp-session-file (expand-file-name "lsp-session" (getenv "RT_HOME"))
           lsp-auto-guess-root t lsp-restart 'ignore lsp-enable-file-watchers nil
           lsp-headerline-breadcrumb-enable nil lsp-modeline-code-actions-enable nil
           lsp-modeline-diagnostics-enable nil lsp-enable-snippet nil lsp-lens-enable t)
     (lsp)
     (rt-wait "lsp-mode to start rewind-ls"
              (lambda () (cl-some (lambda (w) (eq (lsp--workspace-status w) 'initialized))
                                  (lsp-workspaces))) 30))
    ('eglot
     (apply #'eglot (eglot--guess-contact))
     (rt-wait "eglot to start rewind-ls" (lambda () (eglot-current-server)) 30))))

(defun rt-request (method params)
  (pcase rt-client
    ('lsp (lsp-request method params))
    ('eglot (jsonrpc-request (eglot-current-server) (intern (concat ":" method)) params))))

(defun rt-get (obj key)
  (pcase rt-client
    ('lsp (lsp-get obj (intern (concat ":" key))))
    ('eglot (plist-get obj (intern (concat ":" key))))))

(defun rt-command (name &rest args)
  (with-current-buffer (get-file-buffer (rt-path "a.txt"))
    (pcase rt-client
      ('lsp (lsp-send-execute-command name (vconcat args)))
      ('eglot (eglot-execute-command (eglot-current-server) (intern name) (vconcat args))))))

(defun rt-lens-line (ov)
  "The line a lens overlay stands above (lsp-mode 8 makes it end just after that line)."
  (save-excursion (goto-char (1- (overlay-end ov)))
                  (string-trim (thing-at-point 'line t))))

(defun rt-lenses ()
  "Lens titles per line of the current buffer, as lsp-mode shows them."
  (cl-loop for ov in lsp-lens--overlays
           collect (cons (rt-lens-line ov)
                         (mapcar #'substring-no-properties (overlay-get ov 'lsp--metadata)))))

(defun rt-click-lens (line-regexp title)
  "Click the lens TITLE above the line matching LINE-REGEXP, as a mouse click does."
  (let ((token
         (cl-loop for ov in lsp-lens--overlays
                  when (string-match-p line-regexp (rt-lens-line ov))
                  return (cl-find title (overlay-get ov 'lsp--metadata)
                                  :test (lambda (a b) (string= a (substring-no-properties b)))))))
    (unless token (rt-finish (format "no lens %S on a line matching %S" title line-regexp)))
    (funcall-interactively (get-text-property 0 'action token))))

;; --- the scenario --------------------------------------------------------------------------------

(defun rt-asked-and-done (what done-regexp answers thunk)
  "Run THUNK (a command), answer its question with ANSWERS, wait for the outcome message."
  (let ((asked (length rt-questions)))
    (setq rt-answers answers)
    (let ((result (funcall thunk)))
      (rt-note "%s answered %S" what result))
    (rt-wait (concat what ": the question") (lambda () (> (length rt-questions) asked)))
    (rt-wait (concat what ": the outcome") (lambda () (rt-message-seen done-regexp)))))

(defun rt-save-a ()
  (with-current-buffer (get-file-buffer (rt-path "a.txt")) (save-buffer)))

(defun rt-run ()
  (rt-start)
  (let* ((listing (rt-request "rewind/listTurns" (make-hash-table)))
         (current (rt-get listing "currentSessionId"))
         (session (cl-find current (append (rt-get listing "sessions") nil)
                           :key (lambda (s) (rt-get s "id")) :test #'equal))
         (turns (append (rt-get session "turns") nil)))
    (rt-snapshot "listed" (cons 'prompts (vconcat (mapcar (lambda (tn) (rt-get tn "prompt")) turns))))
    ;; The timeline, inside the workspace's server.
    (rewind-ls-timeline)
    (let ((timeline (current-buffer)))
      (if (eq rt-client 'lsp)
          (progn
            (rt-wait "lenses in the timeline" (lambda () (>= (length lsp-lens--overlays) 2)))
            (rt-snapshot "timeline" (cons 'text (buffer-string)) (cons 'lenses (rt-lenses))
                         (cons 'workspaces (length (lsp-workspaces)))
                         (cons 'all_workspaces (length (lsp--session-workspaces (lsp-session)))))
            ;; A lens click previews and asks; Cancel writes nothing.
            (rt-asked-and-done "lens Rewind to here, cancelled" "cancelled" '("Cancel")
                               (lambda () (with-current-buffer timeline
                                            (rt-click-lens "Turn 1 " "Rewind to here")))))
        (rt-snapshot "timeline" (cons 'text (buffer-string))
                     (cons 'managed (and (eglot-current-server) t)))
        ;; eglot has no lenses: the same command by turn id, cancelled.
        (rt-asked-and-done "rewind by id, cancelled" "cancelled" '("Cancel")
                           (lambda () (rt-command "rewind.rewind" (rt-get (car turns) "id")))))
      (rt-snapshot "cancelled"))
    ;; Rewind by number: preview, confirmation, then written.
    (rt-asked-and-done "rewind 1" "restored" '("Rewind")
                       (lambda () (rt-command "rewind.rewind" "1")))
    (rt-wait "the buffer of a.txt to be rewound" (lambda () (equal (rt-buffer-text "a.txt") "a0\n")))
    (rt-snapshot "rewound")
    (rt-save-a)
    (rt-snapshot "rewound-saved")
    ;; A conflict: b.txt changed behind rewind-ls' back, then undo: skip it.
    (let ((coding-system-for-write 'no-conversion))
      (write-region "bX\n" nil (rt-path "b.txt")))
    (setq rt-messages nil)
    (rt-asked-and-done "undo with a conflict" "restored" '("Undo, skip conflicts")
                       (lambda () (rt-command "rewind.undo")))
    (rt-wait "the buffer of a.txt to be undone" (lambda () (equal (rt-buffer-text "a.txt") "a2\n")))
    (rt-snapshot "undone")
    (rt-save-a)
    (rt-snapshot "undone-saved")
    ;; The diff of turn 2, by number.
    (setq rt-messages nil)
    (let ((result (rt-command "rewind.diff" "2")))
      (rt-wait "the diff message" (lambda () (rt-message-seen "\\+c2")))
      (rt-snapshot "diff" (cons 'text (rt-get result "text"))
                   (cons 'message (cl-find-if (lambda (m) (string-match-p "\\+c2" m)) rt-messages)))))
  (pcase rt-client
    ('lsp (lsp-workspace-shutdown (car (lsp-workspaces))))
    ('eglot (eglot-shutdown (eglot-current-server))))
  (rt-finish))

;; RT_SCENARIO names another scenario file to run with these helpers (review-driver.el).
(if (getenv "RT_SCENARIO")
    (load (expand-file-name (getenv "RT_SCENARIO") (file-name-directory load-file-name)))
  (condition-case err
      (rt-run)
    (error (rt-finish (format "error: %S" err)))))
