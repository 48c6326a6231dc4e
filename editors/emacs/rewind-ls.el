;;; rewind-ls.el --- Rewind what AI coding agents did, from Emacs  -*- lexical-binding: t -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: tools, vc
;; URL: https://github.com/rewind-ls/rewind-ls

;;; Commentary:

;; Commands over the rewind-ls language server (`rewind-ls serve'), through lsp-mode or eglot,
;; whichever you use: each command starts the connection itself when it is not running.
;;
;;   M-x rewind-ls            pick a turn of the agent's session, then what to do with it
;;   M-x rewind-ls-rewind     put the files back to the start of a turn
;;   M-x rewind-ls-revert     undo only a turn's own changes (later work stays)
;;   M-x rewind-ls-undo       undo the last rewind, revert or undo
;;   M-x rewind-ls-diff       what a turn changed, in a diff-mode buffer
;;   M-x rewind-ls-timeline   every turn of every session (RET on a turn: rewind, revert, diff)
;;   M-x rewind-ls-browse     the workspace as it was at a turn, read-only (rewind-ls-browse.el)
;;
;; Every restore is previewed first in `*rewind-preview*' (diff-mode: the files, each one's action
;; and +/- lines, conflicts with their reason, and the turn's diff) and asked with
;; `read-multiple-choice' (set `rewind-ls-preview' to nil to skip the preview when nothing
;; conflicts).  Buffers the restore changed are saved when the disk was written, so buffer and file
;; agree; the message names the command that undoes it.
;;
;; While the first checkpoint of a large workspace is taken in the background, the mode line says
;; so ("[rewind: first checkpoint 1500/4000]"), as do the turn prompts and the header line of
;; `*rewind-timeline*', from the first rewind-ls command on (a command is what connects); it is
;; asked again every `rewind-ls-baseline-poll' seconds until done.
;;
;; Install (Emacs 28 and later; editors/emacs/README.md has the other ways):
;;   (add-to-list 'load-path "/path/to/rewind-ls/editors/emacs")
;;   (require 'rewind-ls)
;; tests/editors/test_emacs_package.py runs those two lines as the README writes them.

;;; Code:

(require 'cl-lib)
(require 'subr-x)
(require 'diff-mode)

(defgroup rewind-ls nil
  "Rewind what AI coding agents did."
  :group 'tools)

(defcustom rewind-ls-server-command '("rewind-ls" "serve")
  "The command that starts the rewind-ls language server."
  :type '(repeat string))

(defcustom rewind-ls-client 'auto
  "The LSP client that talks to rewind-ls: lsp-mode, eglot, or auto (lsp-mode when loaded, else eglot)."
  :type '(choice (const auto) (const lsp-mode) (const eglot)))

(defcustom rewind-ls-preview t
  "Preview every restore in `*rewind-preview*' and ask first; nil: only when something conflicts."
  :type 'boolean)

(defcustom rewind-ls-baseline-poll 2
  "Seconds between two questions to the server while the first checkpoint of the workspace runs.
The server sends no notification when it ends, so the mode line asks again until it is done."
  :type 'number)

(defcustom rewind-ls-eglot-modes '(text-mode prog-mode conf-mode)
  "Major modes eglot runs rewind-ls for (eglot runs one server per mode and project)."
  :type '(repeat symbol))

;;; The connection

(defun rewind-ls--backend ()
  (pcase rewind-ls-client
    ('lsp-mode 'lsp)
    ('eglot 'eglot)
    (_ (if (or (featurep 'lsp-mode) (not (locate-library "eglot"))) 'lsp 'eglot))))

(defvar rewind-ls--registered nil)

(defun rewind-ls--register ()
  "Tell the client how to start rewind-ls (once)."
  (unless rewind-ls--registered
    (pcase (rewind-ls--backend)
      ('lsp
       (require 'lsp-mode)
       (lsp-register-client
        (make-lsp-client
         :new-connection (lsp-stdio-connection (lambda () rewind-ls-server-command))
         :initialization-options #'rewind-ls--init-options
         :action-handlers (let ((handlers (make-hash-table :test 'equal)))
                            (dolist (name '("rewind.revertHunk" "rewind.revertInFile"))
                              (puthash name (lambda (command)
                                              (rewind-ls--revert-action
                                               (rewind-ls--get command :arguments)))
                                       handlers))
                            handlers)
         :activation-fn (lambda (_file _mode) t)
         :add-on? t
         :server-id 'rewind-ls)))
      ('eglot
       (require 'eglot)
       (add-to-list 'eglot-server-programs
                    (cons rewind-ls-eglot-modes
                          (append rewind-ls-server-command
                                  '(:initializationOptions (:restoreUnsaved t)))))))
    (setq rewind-ls--registered t)))

(defun rewind-ls--init-options ()
  "What the client tells the server at start: it puts an undo's unsaved texts back itself
(`rewind-ls--put-back-unsaved'), so an undo returns unsaved text unsaved and the disk as it was."
  (let ((options (make-hash-table :test 'equal)))
    (puthash "restoreUnsaved" t options)
    options))

(defun rewind-ls--wait (what pred seconds)
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (unless (funcall pred) (user-error "rewind-ls: timed out waiting for %s" what))))

(defun rewind-ls--lsp-workspace ()
  (cl-find-if (lambda (w) (and (eq (lsp--client-server-id (lsp--workspace-client w)) 'rewind-ls)
                               (eq (lsp--workspace-status w) 'initialized)))
              (lsp-workspaces)))

(defun rewind-ls--ensure ()
  "Start the connection for the current buffer's project when it is not running."
  (rewind-ls--register)
  (pcase (rewind-ls--backend)
    ('lsp
     (unless (bound-and-true-p lsp-mode) (lsp))
     (rewind-ls--wait "lsp-mode to start rewind-ls" #'rewind-ls--lsp-workspace 30))
    ('eglot
     (unless (eglot-current-server)
       (unless (apply #'derived-mode-p rewind-ls-eglot-modes) (text-mode))
       (apply #'eglot (eglot--guess-contact)))
     (rewind-ls--wait "eglot to start rewind-ls" #'eglot-current-server 30))))

(defun rewind-ls--flush ()
  "Send eglot's pending buffer changes now: it sends them when Emacs is idle, and a restore
planned before that would compare against text the person already changed."
  (when (eq (rewind-ls--backend) 'eglot)
    (dolist (buffer (buffer-list))
      (with-current-buffer buffer
        (when (and (bound-and-true-p eglot--managed-mode) eglot--recent-changes)
          (eglot--signal-textDocument/didChange))))))

(defvar rewind-ls--file-buffer nil
  "The last file buffer a command ran from: the connection's home when the current buffer
visits no file (a preview, a diff, the timeline).")

(defun rewind-ls--connection-buffer ()
  (cond ((buffer-file-name) (setq rewind-ls--file-buffer (current-buffer)))
        ((buffer-live-p rewind-ls--file-buffer) rewind-ls--file-buffer)
        (t (user-error "rewind-ls: run this from a file of the project"))))

(defun rewind-ls--request (method &optional params)
  "Send METHOD (\"rewind/...\") with PARAMS (a plist); the answer as a plist-like object."
  (with-current-buffer (rewind-ls--connection-buffer)
    (rewind-ls--ensure)
    (rewind-ls--flush)
    (let ((params (or params (make-hash-table))))
      (pcase (rewind-ls--backend)
        ('lsp (lsp-request method params))
        ('eglot (rewind-ls--eglot-request method params))))))

(defun rewind-ls--eglot-request (method params)
  "METHOD through eglot, waiting while sending eglot's buffer changes: a restore's edit arrives
during the request, and the server waits for the buffers to show it (eglot would send the
change only once Emacs is idle, after the request)."
  (let ((eglot-confirm-server-initiated-edits nil)
        (done nil) (answer nil) (failure nil))
    (jsonrpc-async-request (eglot-current-server) (intern (concat ":" method)) params
                           :success-fn (lambda (result) (setq answer result done t))
                           :error-fn (lambda (err) (setq failure err done t))
                           :timeout 600)
    (while (not done)
      (accept-process-output nil 0.05)
      (rewind-ls--flush))
    (when failure
      (user-error "rewind-ls: %s" (or (plist-get failure :message) failure)))
    answer))

(defun rewind-ls--get (obj key)
  "KEY (a keyword) of a server answer OBJ (a hash table with lsp-mode, a plist with eglot)."
  (if (hash-table-p obj) (gethash (substring (symbol-name key) 1) obj) (plist-get obj key)))

(defun rewind-ls--list (obj key) (append (rewind-ls--get obj key) nil))

;;; The first checkpoint's progress

(defvar rewind-ls--baseline nil
  "The first checkpoint's progress while it runs in the background: (DONE . TOTAL), TOTAL 0
while it lists the files; nil when none runs.")

(defvar rewind-ls--baseline-timer nil)
(defvar rewind-ls--baseline-buffer nil "The file buffer whose connection is asked again.")
(defvar rewind-ls--baseline-polling nil "A poll is waiting for its answer: the next one waits.")

(defvar rewind-ls--mode-line-string ""
  "What `global-mode-string' shows while the first checkpoint runs.")

(defun rewind-ls--baseline-label ()
  "\"first checkpoint 1500/4000\" (\"first checkpoint...\" while it lists the files); nil when none runs."
  (when rewind-ls--baseline
    (if (> (cdr rewind-ls--baseline) 0)
        (format "first checkpoint %d/%d" (car rewind-ls--baseline) (cdr rewind-ls--baseline))
      "first checkpoint…")))

(defun rewind-ls--baseline-message ()
  "What the timeline's header line says while the first checkpoint runs; nil after."
  (when rewind-ls--baseline
    (format "First checkpoint of this workspace in progress (%s), in the background: a rewind keeps every file not recorded yet as it is."
            (if (> (cdr rewind-ls--baseline) 0)
                (format "%d of %d files" (car rewind-ls--baseline) (cdr rewind-ls--baseline))
              "listing the files"))))

(defun rewind-ls--note-baseline (listing)
  "Show the first checkpoint's progress LISTING (a `rewind/listTurns' answer) carries: in the
mode line and the timeline's header line, asked again every `rewind-ls-baseline-poll' seconds
while it runs."
  (let* ((b (rewind-ls--get listing :baseline))
         (was rewind-ls--baseline))
    (setq rewind-ls--baseline
          (and b (not (eq b :null))
               (cons (or (rewind-ls--get b :done) 0) (or (rewind-ls--get b :total) 0))))
    (setq rewind-ls--mode-line-string
          (if rewind-ls--baseline (format " [rewind: %s]" (rewind-ls--baseline-label)) ""))
    (let ((timeline (get-buffer "*rewind-timeline*")))
      (when timeline
        (with-current-buffer timeline
          (setq header-line-format (rewind-ls--baseline-message)))))
    (cond
     (rewind-ls--baseline
      (setq rewind-ls--baseline-buffer rewind-ls--file-buffer)
      ;; A list whose car is a symbol is a conditional (SYMBOL THEN ELSE): alone in the list, our
      ;; symbol would draw "*invalid*".  A "" first makes it a concatenation, as `display-time' does.
      (unless global-mode-string (setq global-mode-string (list "")))
      (add-to-list 'global-mode-string 'rewind-ls--mode-line-string t)
      (unless rewind-ls--baseline-timer
        (setq rewind-ls--baseline-timer
              (run-with-timer rewind-ls-baseline-poll rewind-ls-baseline-poll
                              #'rewind-ls--baseline-poll))))
     (t
      (setq global-mode-string (delq 'rewind-ls--mode-line-string global-mode-string))
      (when rewind-ls--baseline-timer
        (cancel-timer rewind-ls--baseline-timer)
        (setq rewind-ls--baseline-timer nil))
      (when was (message "rewind-ls: the first checkpoint of this workspace is complete"))))
    (force-mode-line-update t)))

(defun rewind-ls--baseline-poll ()
  "Ask the server again how far the first checkpoint is (the timer's function)."
  (unless rewind-ls--baseline-polling
    (let ((rewind-ls--baseline-polling t))
      (if (not (buffer-live-p rewind-ls--baseline-buffer))
          (rewind-ls--note-baseline nil)
        (condition-case nil
            (with-current-buffer rewind-ls--baseline-buffer
              (rewind-ls--note-baseline (rewind-ls--request "rewind/listTurns" (list :limit 1))))
          ;; The connection is gone: nothing to show until a command starts it again.
          (error (rewind-ls--note-baseline nil)))))))

(defun rewind-ls--with-baseline (prompt)
  "PROMPT (\"...: \"), saying the first checkpoint runs when it does."
  (let ((label (rewind-ls--baseline-label)))
    (if label
        (replace-regexp-in-string ": \\'" (format " [%s in progress]: " label) prompt)
      prompt)))

;;; Turns

(defun rewind-ls--turns ()
  "The turns of the current agent session, newest first."
  (let* ((listing (rewind-ls--note-listing (rewind-ls--request "rewind/listTurns")))
         (current (rewind-ls--get listing :currentSessionId))
         (session (cl-find-if (lambda (s) (equal (rewind-ls--get s :id) current))
                              (rewind-ls--list listing :sessions))))
    (reverse (and session (rewind-ls--list session :turns)))))

(defun rewind-ls--note-listing (listing)
  "LISTING (a `rewind/listTurns' answer), after showing the first checkpoint's progress it carries."
  (rewind-ls--note-baseline listing)
  listing)

(defun rewind-ls--label (turn)
  (format "#%s  %s" (rewind-ls--get turn :number)
          (replace-regexp-in-string "[\n\t ]+" " " (or (rewind-ls--get turn :prompt) ""))))

(defun rewind-ls--read-turn (prompt)
  "A turn of the current session, read by its own number (completion shows them all)."
  (let* ((turns (or (rewind-ls--turns) (user-error "rewind-ls: no agent turns recorded here yet")))
         (labels (mapcar (lambda (turn) (cons (rewind-ls--label turn) turn)) turns))
         (completion-extra-properties nil)
         ;; The turns listed at once, not behind TAB.
         (answer (minibuffer-with-setup-hook #'minibuffer-completion-help
                   (completing-read (rewind-ls--with-baseline prompt)
                                    (mapcar #'car labels) nil nil "#"))))
    (or (cdr (assoc answer labels))
        (let ((n (and (string-match "#?\\([0-9]+\\)" answer) (match-string 1 answer))))
          (cl-find-if (lambda (turn) (equal (format "%s" (rewind-ls--get turn :number)) n)) turns))
        (user-error "rewind-ls: no turn %s" answer))))

;;; The preview

(defun rewind-ls--preview-buffer (title files diff &optional about)
  "Fill `*rewind-preview*' (diff-mode) with TITLE, FILES (the preview's) and DIFF; show it.
ABOUT says what DIFF is: the turn's own change, not the restore's."
  (with-current-buffer (get-buffer-create "*rewind-preview*")
    (let ((inhibit-read-only t))
      (erase-buffer)
      (insert title "\n\n")
      (dolist (f files)
        (let ((conflict (rewind-ls--get f :conflict)))
          (insert (format "  %-8s %s  %s\n" (rewind-ls--get f :action) (rewind-ls--get f :path)
                          (if (eq (rewind-ls--get f :binary) t) "binary"
                            (format "+%s -%s" (rewind-ls--get f :added) (rewind-ls--get f :removed)))))
          (when (and conflict (not (eq conflict :null)))
            (insert (format "      conflict: %s\n" (rewind-ls--get conflict :message))))))
      (insert "\nNothing is written until you answer. " (or about "The change:") "\n\n" (or diff ""))
      (diff-mode)
      (setq buffer-read-only t)
      (goto-char (point-min)))
    (display-buffer (current-buffer))
    (current-buffer)))

(defun rewind-ls--conflicts (files)
  (cl-remove-if (lambda (f) (memq (rewind-ls--get f :conflict) '(nil :null))) files))

(defun rewind-ls--turn-diff (turn)
  (condition-case nil
      (let ((answer (rewind-ls--request "workspace/executeCommand"
                                        (list :command "rewind.diff"
                                              :arguments (vector (rewind-ls--get turn :id))))))
        (rewind-ls--get answer :text))
    (error nil)))

(defun rewind-ls--unified (path old new)
  "A unified diff (diff -u) of OLD and NEW (strings; nil: no file) labelled PATH."
  (let ((a (make-temp-file "rewind-now")) (b (make-temp-file "rewind-then")))
    (unwind-protect
        (progn
          (with-temp-file a (when old (insert old)))
          (with-temp-file b (when new (insert new)))
          (with-temp-buffer
            (call-process "diff" nil t nil "-u" "--label" (concat "a/" path)
                          "--label" (concat "b/" path) a b)
            (buffer-string)))
      (delete-file a)
      (delete-file b))))

(defun rewind-ls--restore-diff (point-turn files)
  "What a rewind (or undo) to the start of POINT-TURN writes: each file of FILES that changes,
as it is now (its buffer, else the disk) against its content then (`rewind/fileAt')."
  (mapconcat
   (lambda (f)
     (let* ((uri (rewind-ls--get f :uri))
            (path (rewind-ls--get f :path))
            (then (rewind-ls--request "rewind/fileAt"
                                      (list :turnId (rewind-ls--get point-turn :id)
                                            :uri uri :side "before")))
            (file (url-unhex-string (string-remove-prefix "file://" uri)))
            (buffer (get-file-buffer file))
            (now (cond (buffer (with-current-buffer buffer
                                 (buffer-substring-no-properties (point-min) (point-max))))
                       ((file-regular-p file)
                        (with-temp-buffer (insert-file-contents file) (buffer-string))))))
       (if (or (eq (rewind-ls--get then :binary) t) (eq (rewind-ls--get then :tooLarge) t))
           (format "%s: binary or too large, not shown\n" path)
         (rewind-ls--unified path now (and (eq (rewind-ls--get then :exists) t)
                                           (rewind-ls--get then :text))))))
   (cl-remove-if (lambda (f) (equal (rewind-ls--get f :action) "unchanged")) files)
   ""))

(defun rewind-ls--ask (title files mode)
  "Preview FILES and ask; the restore options (a plist) or nil when cancelled."
  (let* ((conflicts (rewind-ls--conflicts files))
         (merge (cl-some (lambda (f) (equal (rewind-ls--get (rewind-ls--get f :conflict) :kind) "merge"))
                         conflicts))
         (choices
          (cond
           ((and merge (eq mode 'revert))
            '((?m "markers" "write the revert with conflict markers to resolve")
              (?f "rewind file instead" "put those files back as before the turn")
              (?q "cancel" "write nothing")))
           (conflicts
            '((?s "skip conflicts" "restore the other files")
              (?o "overwrite" "restore every file (undoable)")
              (?q "cancel" "write nothing")))
           (t '((?y "yes" "restore") (?q "cancel" "write nothing"))))))
    (if (and (not conflicts) (not rewind-ls-preview))
        '(:go t)
      (save-window-excursion
        (pop-to-buffer "*rewind-preview*")
        (pcase (car (read-multiple-choice (concat title "? ") choices))
          (?y '(:go t))
          (?s '(:skipConflicts t))
          (?o '(:force t))
          (?m '(:merge t))
          (?f (list :rewindPaths (vconcat (mapcar (lambda (f) (rewind-ls--get f :uri)) conflicts))))
          (_ nil))))))

;;; Restores

(defun rewind-ls--save-restored (result &optional skipped)
  "Save the buffers RESULT restored, so buffer and disk agree (the restore is on disk too).
A conflicting file the person chose to leave alone (SKIPPED) keeps its unsaved text unsaved."
  (dolist (f (rewind-ls--restored result skipped))
    (let* ((file (ignore-errors (url-unhex-string
                                 (string-remove-prefix "file://" (rewind-ls--get f :uri)))))
           (buffer (and file (get-file-buffer file))))
      (when (and buffer (buffer-modified-p buffer)
                 (not (equal (rewind-ls--get f :action) "delete")))
        (with-current-buffer buffer (save-buffer))))))

(defun rewind-ls--put-back-unsaved (result)
  "After the save: put the unsaved texts RESULT brings back (an undo's `unsaved') in their
buffers, unsaved, over the saved content the disk holds again.  The paths put back."
  (let (back)
    (dolist (u (rewind-ls--list result :unsaved))
      (let* ((file (url-unhex-string (string-remove-prefix "file://" (rewind-ls--get u :uri))))
             (buffer (get-file-buffer file))
             (edit (rewind-ls--get u :edit)))
        (when (and buffer (not (memq edit '(nil :null))))
          (with-current-buffer buffer
            (dolist (change (rewind-ls--list edit :documentChanges))
              (let ((edits (rewind-ls--get change :edits)))
                ;; The client's own edit code: positions in the encoding it agreed with the server.
                (pcase (rewind-ls--backend)
                  ('lsp (lsp--apply-text-edits edits))
                  ('eglot (eglot--apply-text-edits edits))))))
          (push (rewind-ls--get u :path) back))))
    (nreverse back)))

(defun rewind-ls--revert-action (arguments)
  "The code actions \"Revert this change\" and \"Revert turn N in this file\" (their
command's ARGUMENTS: turn id, file URI, and the hunk for the first) through the package's own
restore flow: previewed and asked, the buffer saved after, like every restore."
  (let* ((args (append arguments nil))
         (hunk (nth 2 args)))
    (rewind-ls--restore 'revert (rewind-ls--turn-by-id (nth 0 args)) (list (nth 1 args))
                        (and (integerp hunk) (list hunk)))))

(with-eval-after-load 'eglot
  ;; eglot runs a code action's command through this generic function (lsp-mode: the client's
  ;; :action-handlers above).
  (cl-defmethod eglot-execute-command (_server (_command (eql rewind.revertHunk)) arguments)
    (rewind-ls--revert-action arguments))
  (cl-defmethod eglot-execute-command (_server (_command (eql rewind.revertInFile)) arguments)
    (rewind-ls--revert-action arguments)))

(defun rewind-ls--restore (mode turn &optional paths hunks)
  "Preview, ask, restore (MODE rewind or revert of TURN, or undo when TURN is nil), report.
PATHS (URIs) and HUNKS (0-based, of the one path) restrict a revert."
  (let* ((number (and turn (rewind-ls--get turn :number)))
         (file (and paths (file-name-nondirectory
                           (url-unhex-string (string-remove-prefix "file://" (car paths))))))
         (title (pcase mode
                  ((guard hunks) (format "Revert hunk %d of turn #%s in %s" (1+ (car hunks)) number file))
                  ('revert (if paths (format "Revert turn #%s in %s" number file)
                             (format "Revert turn #%s" number)))
                  ('undo "Undo the last restore")
                  (_ (format "Rewind to before turn #%s" number))))
         (preview (rewind-ls--request
                   "rewind/preview"
                   (append (list :mode (symbol-name mode))
                           (and turn (list :turnId (rewind-ls--get turn :id)))
                           (and paths (list :paths (vconcat paths)))
                           (and hunks (list :hunks (vconcat hunks))))))
         (files (rewind-ls--list preview :files))
         (point-turn (rewind-ls--get preview :turn)))
    (when (null (cl-remove-if (lambda (f) (equal (rewind-ls--get f :action) "unchanged")) files))
      (user-error "rewind-ls: %s: nothing to restore, every file already matches" title))
    (rewind-ls--preview-buffer (format "%s (%s)" title (rewind-ls--get point-turn :prompt)) files
                               (if (eq mode 'revert)
                                   (rewind-ls--turn-diff point-turn)
                                 (rewind-ls--restore-diff point-turn files))
                               (if (eq mode 'revert)
                                   "What the turn changed (the revert takes out only this;\nlater edits stay):"
                                 "What it writes (each file now, then as it will be):"))
    (let ((options (rewind-ls--ask title files mode)))
      (cond
       ((null options) (message "rewind-ls: %s: cancelled, nothing was written" title))
       ((plist-get options :rewindPaths)
        (rewind-ls--restore 'rewind turn (append (plist-get options :rewindPaths) nil)))
       (t
        (let* ((options (if (plist-get options :go) nil options))
               (result (if (eq mode 'undo)
                           (rewind-ls--request "rewind/undo" (or options (make-hash-table)))
                         (rewind-ls--request
                          "rewind/restore"
                          (append (list :turnId (rewind-ls--get turn :id) :mode (symbol-name mode))
                                  (and paths (list :paths (vconcat paths)))
                                  (and hunks (list :hunks (vconcat hunks)))
                                  options)))))
          (rewind-ls--save-restored result (plist-get options :skipConflicts))
          (rewind-ls--report title result (rewind-ls--put-back-unsaved result)
                             (plist-get options :skipConflicts))))))))

(defun rewind-ls--restored (result skipped)
  "The files RESULT restored: not unchanged, not failed, not a conflict left alone (SKIPPED)."
  (let ((failed (rewind-ls--list result :failed)))
    (cl-remove-if (lambda (f)
                    (or (equal (rewind-ls--get f :action) "unchanged")
                        (member (rewind-ls--get f :path) failed)
                        (and skipped (not (memq (rewind-ls--get f :conflict) '(nil :null))))))
                  (rewind-ls--list result :files))))

(defun rewind-ls--report (title result &optional unsaved skipped)
  "Say what RESULT restored; UNSAVED: the paths whose unsaved text came back, not saved;
SKIPPED: the conflicting files were left alone (not restored, so not named as such)."
  (let* ((changed (rewind-ls--restored result skipped))
         (left (and skipped (rewind-ls--conflicts (rewind-ls--list result :files))))
         (names (mapconcat (lambda (f) (rewind-ls--get f :path)) changed ", "))
         (marked (cl-remove-if-not (lambda (f) (> (or (rewind-ls--get f :markers) 0) 0)) changed)))
    (message "rewind-ls: %s: %s%s%s%s; M-x rewind-ls-undo brings back what was there"
             title
             (if changed (concat "restored " names) (rewind-ls--get result :message))
             (if left
                 (format "; left as they are: %s"
                         (mapconcat (lambda (f) (rewind-ls--get f :path)) left ", "))
               "")
             (if marked
                 (format " (saved with conflict markers in %s: keep one side of each block, then save again)"
                         (mapconcat (lambda (f) (rewind-ls--get f :path)) marked ", "))
               "")
             (if unsaved
                 (format "; your unsaved edits in %s are back, not saved (the disk holds what was saved before)"
                         (string-join unsaved ", "))
               ""))))

;;;###autoload
(defun rewind-ls-rewind (turn)
  "Put the files back to the start of TURN (asked for: #N of the agent's current session)."
  (interactive (list (rewind-ls--read-turn "Rewind to the start of turn: ")))
  (rewind-ls--restore 'rewind turn))

;;;###autoload
(defun rewind-ls-revert (turn)
  "Undo only TURN's own changes; later work stays."
  (interactive (list (rewind-ls--read-turn "Revert turn: ")))
  (rewind-ls--restore 'revert turn))

;;;###autoload
(defun rewind-ls-undo ()
  "Undo the last rewind, revert or undo."
  (interactive)
  (rewind-ls--restore 'undo nil))

;;;###autoload
(defun rewind-ls-diff (turn)
  "Show what TURN changed, in a diff-mode buffer."
  (interactive (list (rewind-ls--read-turn "Diff of turn: ")))
  (let ((text (or (rewind-ls--turn-diff turn) "")))
   (with-current-buffer (get-buffer-create (format "*rewind-diff #%s*" (rewind-ls--get turn :number)))
    (let ((inhibit-read-only t))
      (erase-buffer)
      (insert text))
    (diff-mode)
    (setq buffer-read-only t)
    (goto-char (point-min))
    (pop-to-buffer (current-buffer)))))

(defvar rewind-ls-timeline-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'rewind-ls-timeline-act)
    map)
  "Keys of `*rewind-timeline*': RET acts on the turn of the line.")

(define-derived-mode rewind-ls-timeline-mode special-mode "Rewind-Timeline"
  "The timeline of every session.
RET on a turn's line offers what other clients show as code lenses
on it (rewind, revert, diff), from the keyboard, in a terminal too.")

;;;###autoload
(defun rewind-ls-timeline ()
  "Show every turn of every session in `*rewind-timeline*'.
RET on a turn's line acts on it."
  (interactive)
  (let ((text (rewind-ls--get (rewind-ls--request "rewind/timeline") :text))
        (listing (rewind-ls--request "rewind/listTurns" (list :limit 1))))
    (with-current-buffer (get-buffer-create "*rewind-timeline*")
      (let ((inhibit-read-only t)) (erase-buffer) (insert text))
      (rewind-ls-timeline-mode)
      (goto-char (point-min))
      (pop-to-buffer (current-buffer)))
    ;; The header line says when the first checkpoint is still being taken.
    (rewind-ls--note-baseline listing)))

(defun rewind-ls--turn-by-id (id)
  "The turn ID as `rewind/listTurns' gives it."
  (let* ((listing (rewind-ls--note-listing
                   (rewind-ls--request "rewind/listTurns" (list :turnId id))))
         (session (car (rewind-ls--list listing :sessions))))
    (or (car (and session (rewind-ls--list session :turns)))
        (user-error "rewind-ls: no turn %s" id))))

(defun rewind-ls-timeline-act ()
  "Rewind, revert or diff the turn of this line of the timeline.
Each turn's line ends with its id in brackets."
  (interactive)
  (let ((line (buffer-substring-no-properties (line-beginning-position) (line-end-position))))
    (if (string-match "\\[\\([^]\n]+\\)\\][[:space:]]*\\'" line)
        (rewind-ls--act-on (rewind-ls--turn-by-id (match-string 1 line)))
      (user-error "rewind-ls: no turn on this line (RET on a line ending with a turn's [id])"))))

(defun rewind-ls--act-on (turn)
  "Ask what to do with TURN: rewind, revert, diff (or undo the last restore)."
  (pcase (car (read-multiple-choice
               (format "%s: " (rewind-ls--label turn))
               '((?r "rewind" "files back to the start of this turn")
                 (?v "revert" "undo only this turn's changes")
                 (?d "diff" "what this turn changed")
                 (?u "undo" "undo the last restore")
                 (?q "quit" "nothing"))))
    (?r (rewind-ls-rewind turn))
    (?v (rewind-ls-revert turn))
    (?d (rewind-ls-diff turn))
    (?u (rewind-ls-undo))
    (_ nil)))

;;;###autoload
(defun rewind-ls ()
  "Pick a turn of the agent's current session, then rewind, revert or diff it (or undo)."
  (interactive)
  (rewind-ls--act-on (rewind-ls--read-turn "Turn: ")))

;;;###autoload
(autoload 'rewind-ls-browse "rewind-ls-browse"
  "Browse the workspace as it was at the start of a turn (prefix argument: its end)." t)

(provide 'rewind-ls)
;;; rewind-ls.el ends here
