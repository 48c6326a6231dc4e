#!/usr/bin/env bash
# Builds every release artefact into dist/ (git-ignored), from a clean build environment:
#   - the Python wheel and sdist (checked with `twine check`)
#   - the VS Code extension, a .vsix for this platform, carrying the server: the wheel and
#     its dependencies' wheels for each CPython 3.10-3.14 found here (editors/vscode/bundled/wheels;
#     installed on first start into the extension's own venv with the person's Python, offline)
#   - the Neovim client (rewind-ls.nvim-VERSION.tar.gz) and the Emacs client (rewind-ls-VERSION.el
#     or .tar when it has several files), and CHANGELOG.md
#   - the agents' own packages, running `rewind-ls` from PATH: claude-plugin/ (a one-plugin
#     marketplace: `claude --plugin-dir dist/claude-plugin/rewind-ls`, or `/plugin marketplace add`
#     + `/plugin install rewind-ls@rewind-ls`) and gemini-extension/ (`gemini extensions install`),
#     each also as a .tar.gz
#   - SHA256SUMS (of the files at the top of dist/)
# Needs python3 (>= 3.10), node (>= 20) and npm; nothing of the test harness (no code-server,
# Chromium or Debian packages). Downloads only from the package registries (PyPI, npm).
# Environment:
#   REWIND_BUNDLE_PYTHONS  the CPythons whose wheels the .vsix carries (default: 3.10-3.14 found)
#   PYTHON               the Python that makes the build venv (default python3)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
DIST=$ROOT/dist
BUILD=$ROOT/build/release
EXT=$ROOT/editors/vscode
PY=${PYTHON:-python3}
log() { echo "==> [release] $*"; }

VERSION=$(sed -n 's/^version = "\(.*\)"$/\1/p' pyproject.toml | head -1)
[ -n "$VERSION" ] || { echo "no version in pyproject.toml" >&2; exit 1; }
EXT_VERSION=$(node -p "require('./editors/vscode/package.json').version")
[ "$EXT_VERSION" = "$VERSION" ] || {
  echo "version mismatch: pyproject.toml $VERSION, editors/vscode/package.json $EXT_VERSION" >&2; exit 1; }
grep -q "^## \[$VERSION\]" CHANGELOG.md || { echo "CHANGELOG.md has no '## [$VERSION]' section" >&2; exit 1; }

rm -rf "$DIST"
mkdir -p "$DIST" "$BUILD"

# --- the build environment (build, twine), kept under build/ -------------------------------------
if [ ! -x "$BUILD/venv/bin/python" ]; then
  log "creating the build venv ($BUILD/venv)"
  "$PY" -m venv "$BUILD/venv"
fi
"$BUILD/venv/bin/python" -m pip install --quiet --disable-pip-version-check build twine >"$BUILD/pip.log" 2>&1 || {
  cat "$BUILD/pip.log" >&2; exit 1; }

# --- wheel and sdist -----------------------------------------------------------------------------
log "building the wheel and sdist"
rm -rf build/lib build/bdist.*
"$BUILD/venv/bin/python" -m build --outdir "$DIST" . >"$BUILD/build.log" 2>&1 || {
  cat "$BUILD/build.log" >&2; exit 1; }
WHEEL=$DIST/rewind_ls-$VERSION-py3-none-any.whl
[ -f "$WHEEL" ] || { echo "the wheel $WHEEL was not built" >&2; ls "$DIST" >&2; exit 1; }
log "twine check"
"$BUILD/venv/bin/python" -m twine check --strict "$DIST"/*.whl "$DIST"/*.tar.gz

# --- the VS Code extension -----------------------------------------------------------------------
host_target() {
  local os arch
  case "$(uname -s)" in Linux) os=linux ;; Darwin) os=darwin ;; *) echo "unsupported OS $(uname -s)" >&2; exit 1 ;; esac
  case "$(uname -m)" in x86_64|amd64) arch=x64 ;; aarch64|arm64) arch=arm64 ;; *) echo "unsupported CPU $(uname -m)" >&2; exit 1 ;; esac
  echo "$os-$arch"
}
# The CPython interpreters whose wheels go into the .vsix: each one downloads its own (pip evaluates
# the dependencies' markers, e.g. `python_version < "3.11"`, with the interpreter that runs it, so a
# cross-version download would bundle the wrong set). Found on PATH or under pyenv; REWIND_BUNDLE_PYTHONS
# overrides. The .vsix says which minors it carries (bundled/PYTHONS); another Python gets a clear error.
bundle_pythons() {
  if [ -n "${REWIND_BUNDLE_PYTHONS:-}" ]; then echo "$REWIND_BUNDLE_PYTHONS"; return; fi
  local minor py found=()
  for minor in 10 11 12 13 14; do
    py=
    if python3.$minor -c pass 2>/dev/null; then py=$(command -v python3.$minor)
    elif command -v pyenv >/dev/null; then
      for cand in "$(pyenv root)"/versions/3.$minor.*/bin/python3.$minor; do
        [ -x "$cand" ] && py=$cand
      done
    fi
    [ -n "$py" ] && found+=("$py")
  done
  echo "${found[@]}"
}
# One .vsix for this machine's platform: its wheels are the ones this machine's Pythons pick (build each
# platform's .vsix on that platform, as a CI matrix does).
TARGET=$(host_target)
PYTHONS=$(bundle_pythons)
[ -n "$PYTHONS" ] || { echo "no CPython 3.10-3.14 found to download the bundled wheels" >&2; exit 1; }

if [ ! -f "$EXT/node_modules/.package-lock.json" ] || [ "$EXT/package-lock.json" -nt "$EXT/node_modules/.package-lock.json" ]; then
  log "npm ci (editors/vscode)"
  (cd "$EXT" && npm ci --no-audit --no-fund >/dev/null)
fi
# The protocol's TypeScript types come from the Python models (vscode:prepublish generates them):
# the build venv gets the wheel's dependencies, the models are read from this tree.
"$BUILD/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$WHEEL" >"$BUILD/pip.log" 2>&1 || {
  cat "$BUILD/pip.log" >&2; exit 1; }
export REWIND_PYTHON=$BUILD/venv/bin/python PYTHONPATH=$ROOT

# Dependencies the index has only as an sdist (watchdog 7.x here): built once into a local wheel folder
# that the downloads below also read (they take binaries only, as --platform requires).
EXTRA=$BUILD/extra-wheels
mkdir -p "$EXTRA"
"$BUILD/venv/bin/python" -m pip wheel --quiet --disable-pip-version-check --no-deps -w "$EXTRA" \
  "$(sed -n 's/^ *"\(watchdog[^;"]*\).*/\1/p' pyproject.toml | head -1)" >"$BUILD/pip.log" 2>&1 || {
  cat "$BUILD/pip.log" >&2; exit 1; }

cleanup() { rm -rf "$EXT/bundled"; }
trap cleanup EXIT
log "bundling the server for $TARGET"
rm -rf "$EXT/bundled"
mkdir -p "$EXT/bundled/wheels"
cp "$WHEEL" "$EXT/bundled/wheels/"
minors=()
for py in $PYTHONS; do
  minor=$("$py" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
  log "  wheels for CPython $minor ($py)"
  "$py" -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
    --find-links "$EXTRA" -d "$EXT/bundled/wheels" "$WHEEL" >"$BUILD/download.log" 2>&1 || {
    cat "$BUILD/download.log" >&2; echo "downloading the wheels for CPython $minor failed" >&2; exit 1; }
  minors+=("$minor")
done
# pip itself, run from its wheel: the extension's venv is made --without-pip (Debian's python3 has no
# ensurepip without python3-venv).
"$BUILD/venv/bin/python" -m pip download --quiet --disable-pip-version-check --only-binary=:all: \
  --no-deps -d "$EXT/bundled/wheels" pip >"$BUILD/download.log" 2>&1 || {
  cat "$BUILD/download.log" >&2; exit 1; }
echo "$VERSION" > "$EXT/bundled/VERSION"
echo "${minors[*]}" > "$EXT/bundled/PYTHONS"
out=$DIST/rewind-ls-$VERSION-$TARGET.vsix
(cd "$EXT" && npx --no-install vsce package --no-dependencies --allow-missing-repository \
    --target "$TARGET" --out "$out" >/dev/null)
log "packaged $(basename "$out") ($(du -h "$out" | cut -f1)), for CPython ${minors[*]}"
cleanup
trap - EXIT
unset PYTHONPATH

# --- Neovim and Emacs clients --------------------------------------------------------------------
log "packing the Neovim client"
tar -C "$ROOT/editors" --owner=0 --group=0 --sort=name -czf "$DIST/rewind-ls.nvim-$VERSION.tar.gz" \
  --transform "s,^nvim,rewind-ls.nvim-$VERSION," nvim
if [ -d "$ROOT/editors/emacs" ] && ls "$ROOT"/editors/emacs/*.el >/dev/null 2>&1; then
  log "packing the Emacs client"
  els=("$ROOT"/editors/emacs/*.el)
  if [ ${#els[@]} -eq 1 ]; then
    cp "${els[0]}" "$DIST/rewind-ls-$VERSION.el"
  else
    # package.el's multi-file package: a tar whose folder is NAME-VERSION.
    tar -C "$ROOT/editors" --owner=0 --group=0 --sort=name -cf "$DIST/rewind-ls-$VERSION.tar" \
      --exclude='*.elc' --transform "s,^emacs,rewind-ls-$VERSION," emacs
  fi
else
  log "no Emacs client (editors/emacs/*.el) in this tree: skipped"
fi

# --- the agents' own packages (rewind_ls/core/agents/plugin.py; stdlib only, so any python3) --------
log "writing the Claude Code plugin and the Gemini CLI extension"
for pkg in claude-code:claude-plugin gemini:gemini-extension; do
  REWIND_LS_HOOK_SERVER=0 PYTHONPATH="$ROOT" "$PY" -m rewind_ls install "${pkg%%:*}" \
    --plugin "$DIST/${pkg#*:}" --portable >/dev/null
  tar -C "$DIST" --owner=0 --group=0 --sort=name -czf "$DIST/rewind-ls-${pkg#*:}-$VERSION.tar.gz" \
    "${pkg#*:}"
done

cp CHANGELOG.md "$DIST/CHANGELOG.md"
(cd "$DIST" && find . -maxdepth 1 -type f ! -name SHA256SUMS -printf '%P\0' | sort -z | xargs -0 sha256sum -- > SHA256SUMS)
log "done: $DIST"
ls -l "$DIST"
