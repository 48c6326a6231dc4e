;;; review-driver.el --- the review scenario (code action on one hunk, then undo)  -*- lexical-binding: t -*-
;; Loaded by driver.el when RT_SCENARIO names it, with the driver's helpers. The client code is the
;; real one: lsp-mode's `lsp-code-actions-at-point' + `lsp-execute-code-action', eglot's
;; `eglot-code-actions' (its own completing-read picks the action: the person's answer is scripted).

(defun rt-review-snapshot (name)
  (push (list (cons 'step name)
              (cons 'disk (rt-disk "a.txt"))
              (cons 'buffer (rt-buffer-text "a.txt"))
              (cons 'modified (let ((b (get-file-buffer (rt-path "a.txt"))))
                                (and b (buffer-modified-p b) t))))
        rt-steps))

(defun rt-review-titles ()
  "The code actions offered at point, by title (lsp-mode asks the server itself)."
  (pcase rt-client
    ('lsp (mapcar (lambda (a) (lsp-get a :title)) (lsp-code-actions-at-point)))
    ('eglot
     (mapcar (lambda (a) (plist-get a :title))
             (jsonrpc-request
              (eglot-current-server) :textDocument/codeAction
              (list :textDocument (eglot--TextDocumentIdentifier)
                    :range (list :start (eglot--pos-to-lsp-position (point))
                                 :end (eglot--pos-to-lsp-position (point)))
                    :context (list :diagnostics [])))))))

(defun rt-review-run ()
  (rt-start)
  (with-current-buffer (get-file-buffer (rt-path "a.txt"))
    (goto-char (point-min))
    (forward-line 14)  ; "FIFTEEN": hunk 2 of 3 of turn 1
    (let ((titles (rt-review-titles))
          (asked (length rt-questions)))
      (push (list (cons 'step "actions") (cons 'titles (vconcat titles))) rt-steps)
      (pcase rt-client
        ('lsp
         (setq rt-answers '("Revert"))
         (lsp-execute-code-action
          (cl-find-if (lambda (a) (string-prefix-p "Revert this change" (lsp-get a :title)))
                      (lsp-code-actions-at-point))))
        ('eglot
         ;; eglot asks which action with completing-read, then the server asks its question.
         (setq rt-answers (list (cl-find-if (lambda (tl) (string-prefix-p "Revert this change" tl))
                                            titles)
                                "Revert"))
         ;; Invoked from the keyboard (M-x), so eglot asks with completing-read, not a popup menu.
         (let ((last-nonmenu-event ?\r))
           (eglot-code-actions (point) (point) nil t))))
      (rt-wait "the server's question" (lambda () (> (length rt-questions) asked)))
      (rt-wait "the outcome" (lambda () (rt-message-seen "restored")))
      (rt-wait "the hunk reverted in the buffer"
               (lambda () (string-match-p "^line 15$" (or (rt-buffer-text "a.txt") ""))))
      (rt-review-snapshot "reverted")
      (rt-save-a)
      (rt-review-snapshot "reverted-saved")
      (setq rt-messages nil)
      (rt-asked-and-done "undo" "restored" '("Undo") (lambda () (rt-command "rewind.undo")))
      (rt-wait "the buffer undone"
               (lambda () (string-match-p "^FIFTEEN$" (or (rt-buffer-text "a.txt") ""))))
      (rt-review-snapshot "undone")
      (rt-save-a)
      (rt-review-snapshot "undone-saved")))
  (pcase rt-client
    ('lsp (lsp-workspace-shutdown (car (lsp-workspaces))))
    ('eglot (eglot-shutdown (eglot-current-server))))
  (rt-finish))

(condition-case err
    (rt-review-run)
  (error (rt-finish (format "error: %S" err))))
