"""Every environment variable rewind-ls reads (or sets for a program it runs), with its default and
meaning: the one list the docs' reference page is generated from (`scripts/docs/reference.py`).
`tests/test_docs.py` fails when a variable named in the code is missing here, or one listed here is
read nowhere. Nothing imports this at run time; the readers stay where the setting is used
(`config.py`, `capture/scan_settings.py`, the agents' modules)."""

from __future__ import annotations

from typing import NamedTuple


class EnvVar(NamedTuple):
    name: str
    default: str
    meaning: str
    # "settings": what a person sets; "agents": set by the agent or the system, read here;
    # "tests": fault injection and test switches, never needed in use.
    group: str = "settings"


ENVIRONMENT: tuple[EnvVar, ...] = (
    EnvVar(
        "REWIND_LS_HOME",
        "`$XDG_DATA_HOME/rewind-ls`",
        "where stores, the log and the server log live; refused when another user owns it or can "
        "write to it or to a folder above it (a sticky folder such as `/tmp` is fine, and so is one "
        "only your own primary group can write when no one else is listed in that group, as with the "
        "per-user groups of Debian, Ubuntu and Fedora)",
    ),
    EnvVar(
        "REWIND_LS_MAX_FILE_BYTES",
        "16 MiB",
        'larger files are recorded as "too large" (size, mtime and inode only; never read)',
    ),
    EnvVar("REWIND_LS_RETENTION_DAYS", "30", "`gc` drops checkpoints older than this"),
    EnvVar(
        "REWIND_LS_MAX_STORE_BYTES", "5 GiB", "`gc` drops the oldest turns until the store fits"
    ),
    EnvVar(
        "REWIND_LS_MAX_LINE_BYTES",
        "64 MiB",
        "a longer transcript line is recorded with its long texts cut (the prompt says so; an edit "
        "on such a line is not imported, and says why); forks still copy every line whole",
    ),
    EnvVar(
        "REWIND_LS_MAX_HOOK_BYTES",
        "64 MiB",
        "a larger hook payload is refused with a message (exit 0: the agent goes on), nothing of it "
        "recorded",
    ),
    EnvVar(
        "REWIND_LS_IGNORE",
        "",
        "extra ignore patterns for the workspace scan, comma-separated, gitignore syntax",
    ),
    EnvVar(
        "REWIND_LS_BASELINE_SECONDS",
        "",
        "time a hook may spend on the workspace baseline. Unset: 0.5 s, and a detached worker takes "
        "the rest; set: the rest is done at the next boundaries (`rewind-ls scan` has no limit)",
    ),
    EnvVar("REWIND_LS_SCAN", "1", "`0` turns workspace scans off (edit tools are still recorded)"),
    EnvVar("REWIND_LS_SCAN_CACHE", "1", "`0` lists every folder at every scan (no folder cache)"),
    EnvVar("REWIND_LS_WATCH", "1", "`0`: no workspace watcher; every scan walks the workspace"),
    EnvVar(
        "REWIND_LS_WATCH_IDLE",
        "600",
        "seconds without events or scans after which the watcher stops",
    ),
    EnvVar(
        "REWIND_LS_WATCH_SYNC",
        "0.5",
        "seconds a scan waits for the watcher's answer before walking instead",
    ),
    EnvVar(
        "REWIND_LS_HOOK_SERVER",
        "1",
        "`0`: every hook runs in its own Python process; otherwise hooks after the first run in a "
        "child of your hook server (one per Python, rewind-ls install, `REWIND_LS_HOME` and process "
        "context; `rewind-ls doctor` says whether it is up and which code it runs)",
    ),
    EnvVar(
        "REWIND_LS_HOOK_SERVER_IDLE",
        "900",
        "seconds without a hook after which the hook server stops",
    ),
    EnvVar(
        "REWIND_LS_NOTIFY",
        "1",
        '`0`: no "turn N recorded" line in the agent\'s UI after a turn (on by default: it is how '
        "you learn the turn is recorded and how to go back; turns that changed no file say nothing)",
    ),
    EnvVar(
        "REWIND_LS_SUMMARIZER",
        "`claude -p` (no tools)",
        "shell command for `summarize`: conversation text on stdin, summary on stdout (editors: the "
        "`rewind.summarizer` setting in VS Code, `summarizer` in Neovim's setup)",
    ),
    EnvVar(
        "REWIND_LS_SUMMARIZER_TIMEOUT",
        "300",
        "seconds before the summarizer is stopped (nothing is written)",
    ),
    EnvVar(
        "REWIND_LS_SUMMARY_INSTRUCTIONS",
        "",
        "set by rewind-ls for the summarizer command: the `--instructions` text, if any",
    ),
    EnvVar(
        "REWIND_LS_CLAUDE",
        "`claude`",
        "the Claude Code command the default summarizer runs",
    ),
    EnvVar(
        "REWIND_LS_DEBUG",
        "",
        "set: every hook writes what it recorded to `$REWIND_LS_HOME/rewind-ls.log`",
    ),
    EnvVar(
        "NO_COLOR",
        "",
        "set: no colour in any output (no-color.org); colour is also off in pipes and under "
        "`TERM=dumb`",
    ),
    EnvVar(
        "TMPDIR",
        "`/tmp`",
        "where the servers' sockets go when `XDG_RUNTIME_DIR` is unset or too long",
        "agents",
    ),
    EnvVar(
        "TERM",
        "",
        "`dumb` (or unset): the turn picker is a numbered prompt instead of a full screen",
    ),
    EnvVar("PAGER", "`less -R`", "the pager of `diff` on a terminal; empty or `cat`: none"),
    EnvVar(
        "CLAUDE_CONFIG_DIR",
        "`~/.claude`",
        "Claude Code's folder (transcripts must be in its `projects/`)",
        "agents",
    ),
    EnvVar(
        "CLAUDE_PROJECT_DIR",
        "",
        "set by Claude Code for its hooks: the project folder, whose git top level is the workspace",
        "agents",
    ),
    EnvVar(
        "GEMINI_PROJECT_DIR",
        "",
        "set by Gemini CLI for its hooks: the project folder, whose git top level is the workspace",
        "agents",
    ),
    EnvVar(
        "CODEX_HOME",
        "`~/.codex`",
        "Codex CLI's folder (`install codex --user` writes its `hooks.json`)",
        "agents",
    ),
    EnvVar(
        "COPILOT_HOME",
        "`~/.copilot`",
        "GitHub Copilot CLI's folder (`install copilot --user` writes its hooks; its session files, "
        "which a conversation rewind forks, are there)",
        "agents",
    ),
    EnvVar(
        "COPILOT_PROJECT_DIR",
        "",
        "set by Copilot CLI for its hooks: the project folder, whose git top level is the workspace",
        "agents",
    ),
    EnvVar(
        "REWIND_LS_OPENCODE",
        "`opencode` on `PATH`",
        "the `opencode` program a conversation rewind runs (its own `export` and `import`)",
    ),
    EnvVar(
        "XDG_DATA_HOME",
        "`~/.local/share`",
        "the default `REWIND_LS_HOME` is `rewind-ls` under it",
        "agents",
    ),
    EnvVar(
        "XDG_RUNTIME_DIR",
        "",
        "the servers' sockets live in `rewind-ls` under it (else `rewind-ls-UID` under `$TMPDIR` or `/tmp`)",
        "agents",
    ),
    EnvVar(
        "XDG_STATE_HOME",
        "`~/.local/state`",
        "where Neovim keeps its swap files (read to tell an editor's own undo from a change)",
        "agents",
    ),
    EnvVar(
        "REWIND_LS_HOOK_CHECK",
        "",
        "set by `doctor` when it runs the installed hook command: the command only checks that it "
        "can run, and records nothing",
        "tests",
    ),
    EnvVar(
        "REWIND_LS_PORTABLE",
        "",
        "`1`: no Linux-only call (renameat2, syncfs, /proc, inotify), the code paths macOS runs",
        "tests",
    ),
    EnvVar(
        "REWIND_LS_HISTORY",
        "1",
        "`0`: the watcher keeps no versions of your own between turns (local history off; it still "
        "journals paths for the scans)",
    ),
    EnvVar(
        "REWIND_LS_HISTORY_DEBOUNCE",
        "1.0",
        "seconds a file must be still before its content is kept as a version of your own",
    ),
    EnvVar(
        "REWIND_LS_FAULT",
        "",
        "fault injection, `STAGE:N`: the process stops the N-th time it reaches STAGE (the crash "
        "tests)",
        "tests",
    ),
    EnvVar(
        "REWIND_LS_FAULT_MARK",
        "",
        "fault injection: a file created when a restore reaches its pause point",
        "tests",
    ),
    EnvVar(
        "REWIND_LS_FAULT_PAUSE",
        "0.5",
        "fault injection: seconds a restore pauses at that point",
        "tests",
    ),
)
