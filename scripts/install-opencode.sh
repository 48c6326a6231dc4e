#!/usr/bin/env bash
# Installs the pinned OpenCode (`opencode-ai` on npm: a native binary per platform, put in place by
# the package's postinstall) into .tools/opencode-<version>/ for the real-binary tests
# (tests/agents/). Idempotent: a stamp file naming the version skips the download on the next run.
# Prints the path of the binary.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=${OPENCODE_VERSION:-1.18.33}
PACKAGE=opencode-ai
DEST=.tools/opencode-$VERSION
STAMP=$DEST/.installed
BIN=$DEST/node_modules/.bin/opencode

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$PACKAGE@$VERSION" ] && [ -x "$BIN" ]; then
  echo "$PWD/$BIN"
  exit 0
fi
mkdir -p "$DEST"
# --prefix keeps it in its own folder; no package.json of ours is touched. The postinstall script
# (kept: it links the platform's binary as the package's `opencode`) runs with node.
npm install --silent --no-save --no-audit --no-fund --prefix "$DEST" "$PACKAGE@$VERSION" >&2
# Its own throwaway home: --version must not write into the real one.
HOME="$PWD/$DEST/.home" "$BIN" --version >&2
echo "$PACKAGE@$VERSION" > "$STAMP"
echo "$PWD/$BIN"
