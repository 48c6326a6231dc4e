"""The steps every agent's hook adapter takes, once (claude.hook, codex.hook, gemini.hook map their
payloads onto these).

Runs in the hook process on every agent edit: imports only the stdlib and the core.

The steps the three hook adapters share, written once: each agent's event names (`EventNames`, with
`aliases`: `PostToolUseFailure`, `StopFailure`, Codex's `Interrupt`), payload fields (`HookEvent`),
recovering a pending restore before recording, session start (compaction inside a turn),
opening/closing a turn (and its notice), the shell scan (a shell command's `PreToolUse` first waits
for an unfinished first checkpoint: `wait_for_first_checkpoint`), a tool's file before/after
(`record_edits`: in a turn already open, the session's activity, the files and the caller's rows for
the tool call in one transaction: a hook on an edit commits once), the agent's own folder; `Outcome`.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any, NamedTuple

from rewind_ls.core.errors import BadInput
from rewind_ls.core.model import TurnState

if TYPE_CHECKING:
    from rewind_ls.core.capture.recorder import Recorder
    from rewind_ls.core.store import Store


class Outcome:
    """What one hook call did: a line for the log, and a message for the person (or None)."""

    __slots__ = ("done", "message")

    def __init__(self, done: str, message: str | None = None) -> None:
        self.done = done
        self.message = message


def payload_text(payload: dict[str, Any], key: str, required: bool = True) -> str | None:
    value = payload.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value):
        raise BadInput(f"hook payload: field {key!r} must be a non-empty string, got {value!r:.80}")
    if "\x00" in value:
        raise BadInput(f"hook payload: field {key!r} contains a NUL byte")
    return value


def required_text(payload: dict[str, Any], key: str) -> str:
    value = payload_text(payload, key)
    assert value is not None
    return value


def optional_text(payload: dict[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value and "\x00" not in value else None


def required_cwd(payload: dict[str, Any]) -> str:
    """The payload's `cwd`, which must be an existing absolute folder."""
    cwd = required_text(payload, "cwd")
    if not os.path.isabs(cwd) or not os.path.isdir(cwd):
        raise BadInput(f"hook payload: cwd {cwd!r} is not an existing absolute folder")
    return cwd


def inside_folder(path: str, cwd: str, folder: str) -> bool:
    """Whether `path` (relative ones are relative to `cwd`) is inside `folder`: the agent's own
    folder (sessions, plans, todos) is the agent's business, not the project's."""
    from rewind_ls.core.fs.paths import is_below

    full = os.path.realpath(path if os.path.isabs(path) else os.path.join(cwd, path))
    return is_below(full, os.path.realpath(folder))


class EventNames(NamedTuple):
    """One agent's names for the hook events rewind-ls handles. (A NamedTuple, not a dataclass:
    the hook process must not pay for importing dataclasses.)"""

    start: str  # the session starts, resumes or is compacted
    prompt: str  # a prompt: a turn opens
    stop: str  # the agent finished answering: the turn closes
    end: str  # the session ends
    before_tool: str
    after_tool: str
    # Other names of the same moments: a tool that failed is over as surely as one that succeeded
    # (Claude Code's `PostToolUseFailure`), an answer cut short by an API error or by the person
    # ends the turn (`StopFailure`, Codex's `Interrupt`). Each maps to one of the fields above.
    aliases: tuple[tuple[str, str], ...] = ()

    def canonical(self, name: str) -> str:
        """The handled event `name` stands for (itself when it has no alias)."""
        for alias, field in self.aliases:
            if alias == name:
                return str(getattr(self, field))
        return name


# Claude Code's names. A Bash that exits non-zero fires `PostToolUseFailure`, never `PostToolUse`;
# an API error ends the turn with `StopFailure` instead of `Stop` (2.1.197).
CLAUDE_EVENTS = EventNames(
    "SessionStart",
    "UserPromptSubmit",
    "Stop",
    "SessionEnd",
    "PreToolUse",
    "PostToolUse",
    (("PostToolUseFailure", "after_tool"), ("StopFailure", "stop")),
)
# Codex CLI's (0.169.0): Claude's names, plus `Interrupt` when the person stops a turn (it has no
# `StopFailure` or `PostToolUseFailure`).
CODEX_EVENTS = EventNames(
    "SessionStart",
    "UserPromptSubmit",
    "Stop",
    "SessionEnd",
    "PreToolUse",
    "PostToolUse",
    (("Interrupt", "end"),),
)


class HookEvent:
    """The fields every agent's hook payload carries, checked."""

    __slots__ = ("cwd", "name", "raw_name", "session_id", "tool", "transcript")

    def __init__(
        self,
        payload: dict[str, Any],
        strict_transcript: bool = False,
        names: EventNames | None = None,
    ) -> None:
        # The event as the agent named it, and the handled event it stands for (`aliases`).
        self.raw_name = required_text(payload, "hook_event_name")
        self.name = self.raw_name if names is None else names.canonical(self.raw_name)
        self.session_id = required_text(payload, "session_id")
        self.cwd = required_cwd(payload)
        # Claude Code always sends a usable transcript path: anything else there is a bad payload.
        self.transcript = (
            payload_text(payload, "transcript_path", required=False)
            if strict_transcript
            else optional_text(payload, "transcript_path")
        )
        tool = payload.get("tool_name")
        self.tool = tool if isinstance(tool, str) else None

    def watched(self, names: EventNames, *tools: Collection[str]) -> bool:
        """A turn event, or a tool event of a tool in one of `tools` (the others are ignored)."""
        if self.name in (names.start, names.prompt, names.stop, names.end):
            return True
        return self.is_tool_event(names) and any(self.tool in t for t in tools)

    def is_tool_event(self, names: EventNames, tools: Collection[str] | None = None) -> bool:
        """Before or after a tool (of `tools`, when given)."""
        if self.name not in (names.before_tool, names.after_tool):
            return False
        return tools is None or self.tool in tools


def edit_target(
    hook: HookEvent,
    payload: dict[str, Any],
    names: EventNames,
    tools: dict[str, str],
    agent_home: str,
) -> tuple[str | None, Outcome | None]:
    """The file an edit tool's event names (`tools`: tool -> its tool_input field), None for other
    events; with an Outcome when that file is in the agent's own folder, which is not recorded."""
    if hook.tool is None or not hook.is_tool_event(names, tools):
        return None, None
    file_path = tool_file(payload, hook.tool, tools[hook.tool])
    if inside_folder(file_path, hook.cwd, agent_home):
        return file_path, Outcome(
            f"{hook.tool} {file_path}: in the agent's own folder, not recorded"
        )
    return file_path, None


def in_other_checkout(root: str, path: str, cwd: str) -> str | None:
    """The folder of another checkout below the workspace `root` that holds `path` (relative ones
    are relative to `cwd`), e.g. `.claude/worktrees/NAME` of `claude -w` or of a subagent's
    worktree: its files are that checkout's workspace's, not recorded in this one. None otherwise."""
    from rewind_ls.core.fs.paths import is_below, nested_checkout

    full = os.path.realpath(path if os.path.isabs(path) else os.path.join(cwd, path))
    root_real = os.path.realpath(root)
    if not is_below(full, root_real):
        return None
    return nested_checkout(root_real, os.path.relpath(full, root_real).replace(os.sep, "/"))


def tool_file(payload: dict[str, Any], tool: str, field: str) -> str:
    """The file an edit tool names in its `tool_input[field]`."""
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        raise BadInput(f"hook payload: {tool} tool_input must be an object")
    file_path = tool_input.get(field)
    if not isinstance(file_path, str) or not file_path:
        raise BadInput(f"hook payload: {tool} tool_input has no {field!r}")
    return file_path


def notify_enabled() -> bool:
    """REWIND_LS_NOTIFY=0 silences the line shown in the agent's UI after a turn that changed
    files (default on: it is how a person learns the turn is recorded and how to go back)."""
    return os.environ.get("REWIND_LS_NOTIFY", "1").strip().lower() not in (
        "0",
        "no",
        "off",
        "false",
    )


def progress_printer(prefix: str = "rewind-ls") -> Callable[[str, int, int], None]:
    """Progress of a workspace scan on stderr, only once it has been slow (> 1 s), once a second:
    a first checkpoint of a big workspace must not look like a hung agent."""
    started = time.monotonic()
    last = [started]

    def report(what: str, done: int, total: int) -> None:
        now = time.monotonic()
        if now - started < 1.0 or (now - last[0] < 1.0 and done < total):
            return
        last[0] = now
        label = "recording the workspace baseline" if what == "baseline" else "recording changes"
        sys.stderr.write(f"{prefix}: {label}: {done}/{total} files\n")
        sys.stderr.flush()

    return report


def turn_notice(store: Store, turn_id: str) -> str | None:
    """The line shown in the agent's UI when a turn ends that changed files, and one more for each
    restore the agent made through MCP during the turn (the person sees it and how to undo it)."""
    from rewind_ls.core.capture.recorder import turn_label

    row = store.turn(turn_id)
    if row is None:
        return None
    lines = []
    files = [c for c in store.changes(turn_id) if c.after is not None]
    if files:
        count = f"{len(files)} file{'s' if len(files) != 1 else ''}"
        lines.append(
            f"rewind-ls: {turn_label(row)} recorded, {count}; to go back: rewind-ls rewind "
            f"{row.number}"
        )
    # Restore points are labelled "... (by AGENT via MCP)" (core/restore/flow.py); a few newest
    # are enough: the agent makes one per restore it asks for.
    points = store.turns_page("rewind", 20, None, (TurnState.APPLIED, TurnState.PARTIAL))
    for point in reversed(points):
        if point.seq > row.seq and point.prompt.endswith(" via MCP)"):
            lines.append(f"rewind-ls: {point.prompt}; to take it back: rewind-ls undo")
    return "\n".join(lines) or None


def recorder(store: Store) -> Recorder:
    """The store's Recorder, after finishing or rolling back a restore that is running or was
    killed: its half-swapped files and temporary names are never recorded as the agent's work.
    What the recovery did (paths left alone, files kept beside them) goes to stderr, like the
    CLI's."""
    from rewind_ls.core.capture.recorder import Recorder

    if store.turns_in_state("rewind", TurnState.PENDING):
        from rewind_ls.core.restore.recovery import recover

        for line in recover(store, wait=True):
            sys.stderr.write(f"rewind-ls: recovered an interrupted {line}\n")
    rec = Recorder(store)
    rec.progress = progress_printer()
    return rec


def session_start(
    rec: Recorder, session_id: str, agent: str, transcript: str | None, source: Any
) -> Outcome:
    """A session starts (or resumes, or, `source` "compact", is compacted)."""
    rec.store.ensure_session(session_id, "agent", agent, transcript)
    open_turn = rec.open_turn_id(session_id)
    if source == "compact" and open_turn is not None:
        # Compaction inside a turn (automatic, mid-task): the changes so far are the turn's.
        rec.scan_into(open_turn, session_id)
        return Outcome(f"SessionStart compact inside {open_turn}")
    rec.attribute_outside_changes()
    return Outcome(f"SessionStart {session_id}")


# How long a prompt's hook waits for another delivery of the same prompt to finish opening its
# turn (its scan may take the first checkpoint's budget); past it, it goes on unlocked.
PROMPT_LOCK_WAIT = 30.0
_PROMPT_LOCK_BUCKETS = 64


class PromptLock:
    """Held by a prompt's hook from "is this prompt recorded already?" to its turn's opening.

    Two rewind-ls installs (user and project settings) deliver every hook twice, at the same
    moment. A prompt's claim (its id in `agent_events`) and its turn's opening are two
    transactions with a scan between them, so without a lock the second delivery would find the
    claim without a turn, take the first for a hook that died there, and open a second turn. With
    it, the second delivery looks only once the first has opened its turn (or died: the kernel
    drops a dead process's flock), so the same prompt is one turn. One of a few lock files per
    workspace (`<store>/prompt-locks/`), chosen by the session: two sessions rarely wait on each
    other. `flock` on a file descriptor: nothing to clean up after a kill."""

    __slots__ = ("fd", "path")

    def __init__(self, store: Store, session_id: str) -> None:
        # Any stable spread will do (no hash module: the hook path's import budget).
        bucket = sum(session_id.encode("utf-8", "replace")) % _PROMPT_LOCK_BUCKETS
        self.path = os.path.join(store.path, "prompt-locks", f"{bucket:02d}.lock")
        self.fd = -1

    def __enter__(self) -> PromptLock:
        import fcntl  # flock itself (disk_sync is not on this hook's path)

        try:
            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError:
            return self  # no lock file: recorded as before, never a failed hook
        deadline = time.monotonic() + PROMPT_LOCK_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    break  # the other delivery hangs: go on rather than hold the agent
                time.sleep(0.01)
        self.fd = fd
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # drops the lock
            self.fd = -1


def open_turn(
    rec: Recorder,
    session_id: str,
    prompt: Any,
    agent: str,
    transcript: str | None,
    info: str | None = None,
) -> str:
    """Open the turn of a prompt (a missing prompt is recorded as empty)."""
    text = prompt if isinstance(prompt, str) else ""
    return str(
        rec.begin_turn(
            session_id,
            # A lone surrogate (valid JSON, not UTF-8) could not be stored: replace it.
            text.replace("\x00", "").encode("utf-8", "replace").decode("utf-8"),
            "agent",
            agent,
            transcript,
            info=info,
        )
    )


def open_stamped_prompt(
    rec: Recorder, hook: HookEvent, payload: dict[str, Any], agent: str
) -> Outcome:
    """A prompt opens a turn, once, for an agent whose prompt carries no id (Gemini CLI, Copilot
    CLI) but whose hook input is built once per event and stamped to the millisecond: the same
    `timestamp` and prompt are the same event delivered twice (two installs), claimed as Claude
    Code's prompt id is. Called with the session's `PromptLock` held."""
    import hashlib  # only these agents' prompt pays for it

    prompt = payload.get("prompt")
    stamp = optional_text(payload, "timestamp")
    key = None
    if stamp:
        text = prompt if isinstance(prompt, str) else ""
        key = stamp + " " + hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]
    if key and not rec.store.claim_event(hook.session_id, "prompt", key, "hook"):
        earlier = rec.store.event(hook.session_id, "prompt", key)
        if earlier is not None and earlier.turn_id is not None:
            return Outcome(f"prompt of {stamp}: already recorded")
        # A claim without its turn: that hook died between the two; the prompt is this run's.
    opened = open_turn(rec, hook.session_id, prompt, agent, hook.transcript)
    if key:
        rec.store.set_event_turn(hook.session_id, "prompt", key, opened)
    return Outcome(f"turn {opened} opened")


def close_turn(rec: Recorder, session_id: str, notify: bool) -> Outcome:
    """Close the open turn; `notify`: the agent finished answering (not the session ending), so
    the person is told what was recorded."""
    ended = rec.end_turn(session_id)
    message = None
    if ended is not None and notify and notify_enabled():
        message = turn_notice(rec.store, ended)
    return Outcome(f"turn {ended} closed", message)


def shell_started(
    rec: Recorder, session_id: str, run_id: str, limit_s: float | None = None
) -> None:
    """A shell command starts: other sessions' scans leave the files it changes to this
    session's scan when it finishes. `limit_s`: the longest it can run."""
    from rewind_ls.core.capture import shell_runs

    wait_for_first_checkpoint(rec)  # first: the worker leaves files to a registered run
    shell_runs.shell_started(rec.store, session_id, run_id, limit_s)


def wait_for_first_checkpoint(rec: Recorder) -> None:
    """Before a shell command runs, the first checkpoint must be whole: the command may change
    any file, and one the baseline worker has not read yet would have no content to go back to.
    Edit tools need no wait (their hooks record the files they name first)."""
    from rewind_ls.core.capture.baseline_spawn import baseline_complete, wait_for_baseline
    from rewind_ls.core.capture.scan_settings import scans_enabled, shell_baseline_wait

    store = rec.store
    if not scans_enabled() or baseline_complete(store):
        return
    limit = shell_baseline_wait()
    if limit <= 0:
        return
    if not wait_for_baseline(store.root, store.path, lambda: baseline_complete(store), limit):
        sys.stderr.write(
            f"rewind-ls: the first checkpoint of {store.root} is not complete after {limit:.0f} s;"
            " files the command changes before it reads them cannot be restored\n"
        )


def shell_finished(
    rec: Recorder, session_id: str, run_id: str, turn: str, source: str = "scan"
) -> list[Any]:
    """A shell command finished: it may have changed files no edit tool reports, so the workspace
    scan attributes them to `turn` now (as `source`). Returns the changed files."""
    from rewind_ls.core.capture import shell_runs

    changed = list(rec.scan_into(turn, session_id, source))
    shell_runs.shell_finished(rec.store, session_id, run_id)
    return changed


def record_path(
    rec: Recorder,
    session_id: str,
    rel: str,
    before: bool,
    agent: str,
    turn: str | None = None,
    source: str = "tool",
) -> str:
    """Record a tool call's file before it runs (`before`) or after, in the session's open turn
    or in `turn` (background work of a turn that ended); returns the turn."""
    if before:
        return rec.before(session_id, rel, source, agent, turn)
    return rec.after(session_id, rel, source, agent, turn)


def session_event(
    rec: Recorder, hook: HookEvent, names: EventNames, agent: str, source: Any = None
) -> Outcome | None:
    """A session's start, or a turn's end (the agent stopped answering, or the session ended);
    None for the other events."""
    if hook.name == names.start:
        return session_start(rec, hook.session_id, agent, hook.transcript, source)
    if hook.name in (names.stop, names.end):
        return close_turn(rec, hook.session_id, notify=hook.name == names.stop)
    return None


def run_id(payload: dict[str, Any]) -> str:
    """The id of a shell command's run: its tool call id ("-" when the payload has none)."""
    return optional_text(payload, "tool_use_id") or "-"


def shell_event(
    rec: Recorder,
    hook: HookEvent,
    names: EventNames,
    run: str,
    turn_of: Callable[[], str],
    limit_s: float | None = None,
    source: str = "scan",
) -> tuple[Outcome, str | None, list[Any]]:
    """A shell command starts (registered; `limit_s`: the longest it can run), or finished (or
    failed): what it changed goes to the turn `turn_of()` (as `source`). Returns the outcome,
    and once it finished, that turn and the changed files."""
    if hook.name == names.after_tool:
        turn = turn_of()
        changed = shell_finished(rec, hook.session_id, run, turn, source)
        return Outcome(f"{hook.tool}: {len(changed)} changed file(s)"), turn, changed
    shell_started(rec, hook.session_id, run, limit_s)
    return Outcome(f"{hook.tool}: command registered"), None, []


def record_edits(
    rec: Recorder,
    hook: HookEvent,
    names: EventNames,
    root: str,
    paths: list[str],
    agent: str,
    then: Callable[[str], None] | None = None,
    turn: str | None = None,
    source: str = "tool",
) -> tuple[str, str | None]:
    """Record the files an edit tool names (relative ones are relative to the payload's cwd),
    before it runs or after it ran, with the session's activity and `then(turn)` (the caller's
    own rows for the tool call, e.g. its claimed id); in `turn` as `source` when given (background
    work of a turn that ended), else in the session's turn. In a turn already open, in one write
    transaction: a hook on an edit commits once. Without one, as separate commits: opening the
    turn scans the workspace (its own transactions), and an edit's `after` takes its change
    back from that very scan (`Recorder.after`). Returns the log line ("<tool> <files>:
    before|after recorded") and the turn the last file was recorded in (None: no file)."""
    from contextlib import nullcontext

    from rewind_ls.core.fs.paths import relative_path

    before = hook.name == names.before_tool
    rels = [relative_path(root, p, hook.cwd) for p in paths]
    target = turn
    turn = None
    in_turn = target is not None or rec.open_turn_id(hook.session_id) is not None
    with rec.store.transaction() if in_turn else nullcontext():
        rec.store.ensure_session(hook.session_id, "agent", agent, hook.transcript)
        for rel in rels:
            turn = record_path(rec, hook.session_id, rel, before, agent, target, source)
        if then is not None and turn is not None:
            then(turn)
    return f"{hook.tool} {', '.join(rels)}: {'before' if before else 'after'} recorded", turn
