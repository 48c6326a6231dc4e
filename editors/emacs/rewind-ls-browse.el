;;; rewind-ls-browse.el --- Browse the workspace as it was at a turn, read-only  -*- lexical-binding: t -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1"))
;; Keywords: tools, vc
;; URL: https://github.com/rewind-ls/rewind-ls

;;; Commentary:

;; M-x rewind-ls-browse: pick a turn, and the workspace as it was when the turn began opens in a
;; dired-like buffer `*rewind-browse #N*' (with a prefix argument: as it was when the turn ended).
;;
;;   RET   open the file or folder of the line (a file in a read-only buffer, in its major mode)
;;   ^     the parent folder          g   list the folder again          q   quit the window
;;
;; Nothing is written anywhere: the listing comes from the server's `rewind/listFolder', a file's
;; content from `rewind/fileAt' (docs/see-the-past.md).  Files rewind-ls' ignore rules leave out
;; were never recorded and are not listed.

;;; Code:

(require 'cl-lib)
(require 'url-util)
(require 'rewind-ls)

(defvar-local rewind-ls-browse--turn nil "The turn browsed (as `rewind/listTurns' gives it).")
(defvar-local rewind-ls-browse--side "before" "\"before\": the turn's start; \"after\": its end.")
(defvar-local rewind-ls-browse--folder "" "The folder listed, relative to the workspace (\"\" for it).")
(defvar-local rewind-ls-browse--root nil "The workspace's file: URI, with a final slash.")

(defvar rewind-ls-browse-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'rewind-ls-browse-open)
    (define-key map (kbd "^") #'rewind-ls-browse-up)
    (define-key map (kbd "g") #'rewind-ls-browse-refresh)
    (define-key map (kbd "n") #'next-line)
    (define-key map (kbd "p") #'previous-line)
    map)
  "Keys of `rewind-ls-browse-mode'.")

(define-derived-mode rewind-ls-browse-mode special-mode "Rewind-Browse"
  "A folder of the workspace as it was at a turn, read-only.
\\{rewind-ls-browse-mode-map}")

(defun rewind-ls-browse--uri (root rel)
  "The file: URI of REL (relative; \"\" for the workspace) under ROOT (ending in /)."
  (concat root (mapconcat #'url-hexify-string (split-string rel "/" t) "/")))

(defun rewind-ls-browse--side-name (side)
  (if (equal side "after") "end" "start"))

;;;###autoload
(defun rewind-ls-browse (turn &optional after)
  "Browse the workspace as it was at the start of TURN.
With a prefix argument AFTER: as it was at its end."
  (interactive (list (rewind-ls--read-turn "Browse the workspace at the start of turn: ")
                     current-prefix-arg))
  (rewind-ls-browse--show turn (if after "after" "before") "" nil))

(defun rewind-ls-browse--show (turn side folder root)
  "List FOLDER of the workspace at TURN's SIDE.
ROOT: the workspace's URI when known."
  (let* ((params (append (list :turnId (rewind-ls--get turn :id) :side side)
                         (and root (not (string-empty-p folder))
                              (list :uri (rewind-ls-browse--uri root folder)))))
         (listing (rewind-ls--request "rewind/listFolder" params))
         (root (or root (let ((uri (rewind-ls--get listing :uri)))
                          (if (string-suffix-p "/" uri) uri (concat uri "/")))))
         (name (format "*rewind-browse #%s%s*" (rewind-ls--get turn :number)
                       (if (equal side "after") " end" ""))))
    (pop-to-buffer-same-window (get-buffer-create name))
    (let ((inhibit-read-only t))
      (erase-buffer)
      (rewind-ls-browse-mode)
      (setq rewind-ls-browse--turn turn rewind-ls-browse--side side
            rewind-ls-browse--folder folder rewind-ls-browse--root root)
      (insert (format "  Turn #%s at its %s (%s), read-only: /%s\n"
                      (rewind-ls--get turn :number) (rewind-ls-browse--side-name side)
                      (or (rewind-ls--get listing :startedAt) "")
                      folder))
      (unless (string-empty-p folder)
        (insert (propertize "  drwxr-xr-x          -  ../\n" 'rewind-ls-entry 'up)))
      (dolist (entry (rewind-ls--list listing :entries))
        (let* ((dir (eq t (rewind-ls--get entry :folder)))
               (exec (eq t (rewind-ls--get entry :executable)))
               (entry-name (rewind-ls--get entry :name))
               (line (format "  %s  %9s  %s%s\n"
                             (cond (dir "drwxr-xr-x") (exec "-rwxr-xr-x") (t "-rw-r--r--"))
                             (if dir "-" (rewind-ls--get entry :size))
                             entry-name (if dir "/" ""))))
          (insert (propertize line 'rewind-ls-entry
                              (cons (if dir 'folder 'file)
                                    (if (string-empty-p folder) entry-name
                                      (concat folder "/" entry-name))))))))
    (goto-char (point-min))
    (forward-line 1)))

(defun rewind-ls-browse-open ()
  "Open the file or folder of this line, as it was at the turn."
  (interactive)
  (let ((entry (get-text-property (line-beginning-position) 'rewind-ls-entry)))
    (pcase entry
      ('up (rewind-ls-browse-up))
      (`(folder . ,rel) (rewind-ls-browse--show rewind-ls-browse--turn rewind-ls-browse--side
                                                rel rewind-ls-browse--root))
      (`(file . ,rel) (rewind-ls-browse--file rel))
      (_ (user-error "rewind-ls: no file or folder on this line")))))

(defun rewind-ls-browse-up ()
  "List the parent folder."
  (interactive)
  (unless (string-empty-p rewind-ls-browse--folder)
    (rewind-ls-browse--show rewind-ls-browse--turn rewind-ls-browse--side
                            (or (file-name-directory (directory-file-name rewind-ls-browse--folder)) "")
                            rewind-ls-browse--root)))

(defun rewind-ls-browse-refresh ()
  "List this folder again."
  (interactive)
  (rewind-ls-browse--show rewind-ls-browse--turn rewind-ls-browse--side
                          rewind-ls-browse--folder rewind-ls-browse--root))

(defun rewind-ls-browse--file (rel)
  "REL as it was at the turn, read-only, in the major mode its name calls for."
  (let* ((turn rewind-ls-browse--turn)
         (side rewind-ls-browse--side)
         (root rewind-ls-browse--root)
         (answer (rewind-ls--request "rewind/fileAt"
                                     (list :turnId (rewind-ls--get turn :id)
                                           :uri (rewind-ls-browse--uri root rel) :side side)))
         (text (cond ((not (eq t (rewind-ls--get answer :exists))) "(did not exist then)\n")
                     ((eq t (rewind-ls--get answer :binary)) "(binary file: not shown)\n")
                     ((eq t (rewind-ls--get answer :tooLarge)) "(file too large: not recorded)\n")
                     (t (rewind-ls--get answer :text))))
         (name (format "%s (turn #%s %s)" rel (rewind-ls--get turn :number)
                       (rewind-ls-browse--side-name side))))
    (pop-to-buffer-same-window (get-buffer-create name))
    (let ((inhibit-read-only t))
      (erase-buffer)
      (insert text))
    ;; The mode the file's name calls for, without visiting it (nothing can be saved back).
    (let ((buffer-file-name (expand-file-name rel (url-unhex-string
                                                   (string-remove-prefix "file://" root)))))
      (set-auto-mode))
    (setq buffer-read-only t)
    (set-buffer-modified-p nil)
    (goto-char (point-min))))

(provide 'rewind-ls-browse)
;;; rewind-ls-browse.el ends here
