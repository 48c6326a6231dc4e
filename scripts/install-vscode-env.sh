#!/usr/bin/env bash
# Installs what the VS Code end-to-end test needs, from the package registries only:
#   - Debian packages: chromium, ripgrep, and the build deps of code-server's native modules
#   - code-server 4.100.3 (= VS Code 1.100.3, runs on Node 20) into .tools/code-server/
#   - the extension's npm dependencies (editors/vscode/node_modules, includes playwright-core)
#   - the built and packaged extension: .tools/rewind-ls.vsix (REWIND_VSIX elsewhere), its
#     src/protocol.ts generated first from the Python protocol models
# Idempotent: every step is skipped when its result is already there (a second run takes seconds).
# Environment: REWIND_TOOLS_DIR (default: <repo>/.tools).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TOOLS=${REWIND_TOOLS_DIR:-$ROOT/.tools}
CODE_SERVER_VERSION=4.100.3
CS_DIR=$TOOLS/code-server
CS_STAMP=$CS_DIR/.installed-$CODE_SERVER_VERSION
EXT_DIR=$ROOT/editors/vscode
VSIX=${REWIND_VSIX:-$TOOLS/rewind-ls.vsix}
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

log() { echo "==> [vscode-env] $*"; }
mkdir -p "$TOOLS"

# --- Debian packages ----------------------------------------------------------------------------
APT_PACKAGES=(chromium ripgrep build-essential pkg-config python3 libkrb5-dev libx11-dev libxkbfile-dev
  libsecret-1-dev fonts-dejavu-core)
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
command -v node >/dev/null || { echo "node (>= 20) is required" >&2; exit 1; }

# --- code-server --------------------------------------------------------------------------------
if [ -f "$CS_STAMP" ]; then
  log "code-server $CODE_SERVER_VERSION present"
else
  log "installing code-server $CODE_SERVER_VERSION (a few minutes)"
  rm -rf "$CS_DIR"
  mkdir -p "$CS_DIR"
  cd "$CS_DIR"
  echo '{"name":"rewind-code-server","private":true}' > package.json
  # Its postinstall downloads ripgrep from a host we cannot reach: install with scripts off and build
  # the native modules by hand.
  npm install --ignore-scripts --no-save "code-server@$CODE_SERVER_VERSION" >/dev/null
  cd node_modules/code-server/lib/vscode
  npm install --unsafe-perm --omit=dev --ignore-scripts >/dev/null
  mkdir -p node_modules/@vscode/ripgrep/bin
  cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
  npm_config_yes=true npm rebuild kerberos @parcel/watcher @vscode/deviceid @vscode/spdlog native-watchdog node-pty >/dev/null
  ln -sfn node_modules node_modules.asar
  (cd bin/remote-cli && ln -sf code-linux.sh code-server)
  (cd bin/helpers && ln -sf browser-linux.sh browser.sh)
  (cd extensions && npm install --unsafe-perm --omit=dev --ignore-scripts >/dev/null)
  cd "$CS_DIR"
  npm_config_yes=true npm rebuild argon2 >/dev/null
  node node_modules/code-server/out/node/entry.js --version
  touch "$CS_STAMP"
fi

# --- the extension: dependencies, build, package ------------------------------------------------
cd "$EXT_DIR"
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "npm ci (editors/vscode)"
  npm ci >/dev/null
else
  log "editors/vscode/node_modules up to date"
fi

# The protocol's TypeScript types are generated from the Python models (not in git).
PY=${REWIND_PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || { echo "$PY missing: scripts/test.sh creates .venv (or set REWIND_PYTHON)" >&2; exit 1; }
log "generating src/protocol.ts from rewind_ls/protocol/"
"$PY" -m rewind_ls.protocol.typescript

sources_hash() {
  (cd "$EXT_DIR" && find src media package.json package-lock.json tsconfig.json esbuild.mjs README.md \
      LICENSE .vscodeignore -type f 2>/dev/null | LC_ALL=C sort | xargs sha256sum) | sha256sum | cut -d' ' -f1
}
HASH=$(sources_hash)
if [ -f "$VSIX" ] && [ "$(cat "$VSIX.sha256" 2>/dev/null)" = "$HASH" ]; then
  log "extension package up to date: $VSIX"
else
  log "building and packaging the extension"
  npm run --silent package -- --out "$VSIX" >/dev/null
  echo "$HASH" > "$VSIX.sha256"
  log "packaged $VSIX"
fi
