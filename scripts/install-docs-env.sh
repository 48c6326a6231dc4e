#!/usr/bin/env bash
# Installs what the docs' pictures need beyond the Python test dependencies (mkdocs-material, rich:
# pyproject.toml): tmux from Debian's packages, in which tests/test_docs_pictures.py runs the CLI's
# turn picker and renders it to SVG. Idempotent: nothing is done when tmux is installed.
set -euo pipefail
log() { echo "==> [docs-env] $*"; }
if ! command -v tmux >/dev/null; then
  SUDO=
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  log "apt-get install tmux"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends tmux >/dev/null
fi
tmux -V
