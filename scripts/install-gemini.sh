#!/usr/bin/env bash
# Installs the pinned Gemini CLI (JavaScript, needs node >= 20) from the npm registry into
# .tools/gemini-<version>/ for the real-binary tests (tests/agents/). Idempotent: a stamp file naming the
# version skips the download on the next run. Prints the path of its entry script (run it with node).
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=${GEMINI_CLI_VERSION:-0.61.0}
PACKAGE=@google/gemini-cli
DEST=.tools/gemini-$VERSION
STAMP=$DEST/.installed
ENTRY=$DEST/node_modules/$PACKAGE/bundle/gemini.js

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$PACKAGE@$VERSION" ] && [ -f "$ENTRY" ]; then
  echo "$PWD/$ENTRY"
  exit 0
fi
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
  echo "install-gemini: Gemini CLI $VERSION needs node >= 20, found $(node --version)" >&2
  exit 1
fi
mkdir -p "$DEST"
# --prefix keeps it in its own folder; no package.json of ours is touched.
npm install --silent --no-save --no-audit --no-fund --prefix "$DEST" "$PACKAGE@$VERSION" >&2
node "$ENTRY" --version >&2
echo "$PACKAGE@$VERSION" > "$STAMP"
echo "$PWD/$ENTRY"
