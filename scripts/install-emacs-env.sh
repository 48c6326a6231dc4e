#!/usr/bin/env bash
# Installs what the Emacs end-to-end tests need, from Debian's packages only: Emacs 28 (emacs-nox) with
# lsp-mode 8 (elpa-lsp-mode) and eglot 1.9 (elpa-eglot), the versions a Debian 12 user gets with apt.
# They are two LSP clients nobody on this project wrote: tests/editors/test_emacs.py drives them in batch
# mode against `rewind-ls serve`. Idempotent: nothing is done when the packages are installed.
set -euo pipefail
APT_PACKAGES=(emacs-nox elpa-lsp-mode elpa-eglot)
log() { echo "==> [emacs-env] $*"; }
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  log "apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  log "Debian packages present"
fi
emacs --version | head -1
