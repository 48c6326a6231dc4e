#!/usr/bin/env bash
# Installs the pinned Codex CLI native binary from the npm registry into .tools/codex-<version>/ for the
# real-binary tests (tests/agents/). The binary lives in the platform build of @openai/codex (published as
# the version `<version>-linux-x64`); the plain package is only a launcher. Idempotent: a stamp file
# naming the version skips the download on the next run. Prints the binary's path.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=${CODEX_VERSION:-0.169.0}
SPEC=@openai/codex@$VERSION-linux-x64
DEST=.tools/codex-$VERSION
STAMP=$DEST/.installed

find_bin() { find "$DEST/node_modules/@openai/codex" -type f -name codex -path '*vendor*' 2>/dev/null | head -n 1; }

BIN=$(find_bin || true)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$SPEC" ] && [ -n "$BIN" ] && [ -x "$BIN" ]; then
  echo "$PWD/$BIN"
  exit 0
fi
mkdir -p "$DEST"
# --prefix keeps it in its own folder; no package.json of ours is touched.
npm install --silent --no-save --no-audit --no-fund --prefix "$DEST" "$SPEC" >&2
BIN=$(find_bin)
if [ -z "$BIN" ]; then
  echo "install-codex: no vendor/**/codex binary in $DEST/node_modules/@openai/codex" >&2
  exit 1
fi
"$BIN" --version >&2
echo "$SPEC" > "$STAMP"
echo "$PWD/$BIN"
