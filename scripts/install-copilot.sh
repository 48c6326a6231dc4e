#!/usr/bin/env bash
# Installs the pinned GitHub Copilot CLI (`@github/copilot` on npm: a native binary per platform)
# into .tools/copilot-<version>/ for the real-binary tests (tests/agents/), and unpacks its bundled
# files into .tools/copilot-<version>/cache (the binary does that on its first run; the tests point
# COPILOT_CACHE_HOME there so no test unpacks it again). Idempotent: a stamp file naming the version
# skips the download on the next run. Prints the path of the binary.
set -euo pipefail
cd "$(dirname "$0")/.."

VERSION=${COPILOT_CLI_VERSION:-1.0.102}
PACKAGE=@github/copilot
DEST=.tools/copilot-$VERSION
STAMP=$DEST/.installed
BIN=$DEST/node_modules/.bin/copilot

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$PACKAGE@$VERSION" ] && [ -x "$BIN" ]; then
  echo "$PWD/$BIN"
  exit 0
fi
mkdir -p "$DEST"
# --prefix keeps it in its own folder; no package.json of ours is touched.
npm install --silent --no-save --no-audit --no-fund --prefix "$DEST" "$PACKAGE@$VERSION" >&2
# Its own throwaway home: unpacking must not write into the real one.
HOME="$PWD/$DEST/.home" COPILOT_CACHE_HOME="$PWD/$DEST/cache" COPILOT_SEA_EXTRACT_ONLY=1 "$BIN" >&2
HOME="$PWD/$DEST/.home" COPILOT_CACHE_HOME="$PWD/$DEST/cache" "$BIN" --version >&2
echo "$PACKAGE@$VERSION" > "$STAMP"
echo "$PWD/$BIN"
