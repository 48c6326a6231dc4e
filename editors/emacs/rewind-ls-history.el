;;; rewind-ls-history.el --- One file's recorded versions, from Emacs  -*- lexical-binding: t -*-

;;; Commentary:

;; M-x rewind-ls-file-history: the versions rewind-ls recorded of the current buffer's file
;; (local history: each agent turn's version and each of your own, edits between turns included),
;; newest first, with `completing-read'; the chosen one is previewed in `*rewind-preview*' and
;; restored (`rewind/preview' + `rewind/restore' with mode "version": compare-and-swap, a restore
;; point first), so M-x rewind-ls-undo takes it back.  Load it after rewind-ls.el:
;;
;;   (require 'rewind-ls-history)

;;; Code:

(require 'cl-lib)
(require 'rewind-ls)

(defun rewind-ls--version-label (version)
  "A line for VERSION of `rewind/fileVersions': time, source, short hash, prompt."
  (let ((time (rewind-ls--get version :time))
        (prompt (rewind-ls--get version :prompt)))
    (format "%-16s  %-10s  %s  %s"
            (if (stringp time)
                (substring (replace-regexp-in-string "T" " " time) 0 (min 16 (length time)))
              "first seen")
            (rewind-ls--get version :source)
            (substring (rewind-ls--get version :hash) 0 8)
            (if (stringp prompt) (replace-regexp-in-string "[ \t\n]+" " " prompt) ""))))

(defun rewind-ls--restorable (versions)
  "The VERSIONS that hold content (not a deletion, not a file over the size cap)."
  (cl-remove-if-not (lambda (v) (and (stringp (rewind-ls--get v :hash))
                                     (equal (rewind-ls--get v :kind) "file")))
                    versions))

;;;###autoload
(defun rewind-ls-file-history (&optional file)
  "Pick one of FILE's recorded versions and restore it.
FILE defaults to the current buffer's file."
  (interactive)
  (let* ((file (expand-file-name
                (or file buffer-file-name
                    (user-error "rewind-ls: history of which file? Visit it first"))))
         (listing (rewind-ls--request "rewind/fileVersions" (list :uri file)))
         (path (rewind-ls--get listing :path))
         (choices (mapcar (lambda (v) (cons (rewind-ls--version-label v) v))
                          (rewind-ls--restorable (rewind-ls--list listing :versions)))))
    (unless choices
      (user-error "rewind-ls: %s: no recorded version to restore" path))
    (let* ((version (cdr (assoc (completing-read (format "Restore which version of %s? " path)
                                                 (mapcar #'car choices) nil t)
                                choices)))
           (hash (rewind-ls--get version :hash))
           (title (format "Restore %s to version %s" path (substring hash 0 8)))
           (params (list :turnId (rewind-ls--get version :turnId) :mode "version"
                         :paths (vector file) :version hash))
           (files (rewind-ls--list (rewind-ls--request "rewind/preview" params) :files)))
      (rewind-ls--preview-buffer title files nil "The file goes back to that version:")
      (let ((options (rewind-ls--ask title files 'version)))
        (if (null options)
            (message "rewind-ls: %s: cancelled, nothing was written" title)
          (let ((result (rewind-ls--request
                         "rewind/restore"
                         (append params (and (not (plist-get options :go)) options)))))
            (rewind-ls--save-restored result)
            (rewind-ls--report title result)))))))

(provide 'rewind-ls-history)
;;; rewind-ls-history.el ends here
