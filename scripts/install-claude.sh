#!/usr/bin/env bash
# Installs the pinned Claude Code native binary from the npm registry into .tools/claude-code-<version>/
# for the real-binary tests (tests/agents/). Idempotent: a stamp file naming the version skips the
# download on the next run. Prints the binary's path.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=${CLAUDE_CODE_VERSION:-2.1.332}
PACKAGE=@anthropic-ai/claude-code-linux-x64
DEST=.tools/claude-code-$VERSION
STAMP=$DEST/.installed
BIN=$DEST/node_modules/$PACKAGE/claude

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$PACKAGE@$VERSION" ] && [ -x "$BIN" ]; then
  echo "$PWD/$BIN"
  exit 0
fi
mkdir -p "$DEST"
# --prefix keeps it in its own folder; no package.json of ours is touched.
npm install --silent --no-save --no-audit --no-fund --prefix "$DEST" "$PACKAGE@$VERSION" >&2
"$BIN" --version >&2
echo "$PACKAGE@$VERSION" > "$STAMP"
echo "$PWD/$BIN"
