"""Shell commands running in agent sessions: whose effects a scan leaves to them, and when they end.

A session's `PreToolUse` for a shell command registers the run (a `meta` row: start time, the
latest time it can still be running, the agent process). Its `PostToolUse` (or
`PostToolUseFailure`) scan attributes what the command did and forgets the run; so does the end of
its turn by any road (`Stop`, `StopFailure`, `SessionEnd`, Codex's `Interrupt`, the next prompt).
Meanwhile another session's scan defers files changed after the run started (see `core.capture.scan`),
or, when that scan is the end of its own overlapping shell command, records them as shared.

A run whose end no hook reports (Esc in Claude Code's UI fires none; a killed agent fires none) is
over once its deadline passes (the command's own time limit, when the payload gives one, plus
`SLACK_NS`; else `SHELL_RUN_EXPIRY_NS`) or once the agent process that registered it is gone.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rewind_ls.core.store import Store

SHELL_RUN = "scan.shell-run:"  # meta key prefix: "<prefix><session> <run id>" -> Run.encode()
# Background jobs' meta key prefix (`core.capture.background_shell`, imported only when one is
# registered: the hook's import budget).
BACKGROUND_JOB = "scan.background-shell:"
SHELL_RUN_EXPIRY_NS = 15 * 60 * 1_000_000_000  # no time limit known: Claude Code's longest + 5 min
SLACK_NS = 30 * 1_000_000_000  # a command killed at its limit still needs a moment to exit
# A file system keeping whole seconds: a ctime lags the moment of the change by up to two.
CLOCK_SLACK_NS = 2_000_000_000
# A file system with nanosecond timestamps: a ctime lags the moment of the change by at most a few
# of the kernel's coarse clock's ticks (1/HZ, 4-10 ms).
TICK_SLACK_NS = 50_000_000
# Processes between the agent and its hook command: the shell it runs hooks with, and wrappers.
_NOT_THE_AGENT = {"sh", "bash", "dash", "zsh", "fish", "ksh", "busybox", "env", "timeout", "nice"}


class Run:
    """One registered shell run."""

    __slots__ = ("agent", "deadline_ns", "run_id", "session_id", "start_ns")

    def __init__(
        self, session_id: str, run_id: str, start_ns: int, deadline_ns: int, agent: str
    ) -> None:
        self.session_id = session_id
        self.run_id = run_id
        self.start_ns = start_ns
        self.deadline_ns = deadline_ns
        self.agent = agent  # "pid:start-time" of the agent process ("" unknown)

    def encode(self) -> str:
        return f"{self.start_ns} {self.deadline_ns} {self.agent or '-'}"

    @classmethod
    def decode(cls, key: str, value: str) -> Run | None:
        session_id, _, run_id = key[len(SHELL_RUN) :].partition(" ")
        parts = value.split()
        try:
            start = int(parts[0])
            deadline = int(parts[1]) if len(parts) > 1 else start + SHELL_RUN_EXPIRY_NS
        except (ValueError, IndexError):
            return None
        agent = parts[2] if len(parts) > 2 and parts[2] != "-" else ""
        return cls(session_id, run_id, start, deadline, agent)

    def over(self, now_ns: int) -> bool:
        """Past its deadline, or its agent process is gone."""
        return now_ns > self.deadline_ns or not agent_alive(self.agent)

    def ended_at(self, now_ns: int) -> int:
        """When the run ended at the latest, for a run that is `over`."""
        return min(now_ns, self.deadline_ns)


def proc_stat(pid: int) -> tuple[str, int, str] | None:
    """(command name, parent pid, start time in clock ticks) of `pid` from /proc; None: gone or
    no /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    # "pid (comm) state ppid ... starttime(22nd)"; comm may hold spaces and parentheses.
    open_paren, close_paren = raw.find("("), raw.rfind(")")
    fields = raw[close_paren + 2 :].split()
    try:
        return raw[open_paren + 1 : close_paren], int(fields[1]), fields[19]
    except (IndexError, ValueError):
        return None


# The parent of the hook command when this hook runs in a hook server's child (whose own parent
# is the server): set by the child from its client's request.
HOOK_PARENT: int | None = None


def hook_parent() -> int:
    """The process that started the hook command (the agent, or a shell or wrapper of it)."""
    return HOOK_PARENT if HOOK_PARENT is not None else os.getppid()


def agent_process() -> str:
    """The agent process running this hook ("pid:start-time"): the first ancestor that is not a
    shell or a wrapper. Its start time tells a reused pid from the agent. "" when unknown."""
    pid = hook_parent()
    for _ in range(8):
        stat = proc_stat(pid)
        if stat is None:
            return "" if not os.path.isdir("/proc") else f"{pid}:"
        name, parent, started = stat
        if name not in _NOT_THE_AGENT or parent <= 1:
            return f"{pid}:{started}"
        pid = parent
    return ""


def agent_alive(agent: str) -> bool:
    """Whether the agent process `agent` ("pid:start-time") still runs (True when unknown)."""
    pid_text, _, started = agent.partition(":")
    if not pid_text.isdigit():
        return True
    pid = int(pid_text)
    if os.path.isdir("/proc"):
        stat = proc_stat(pid)
        if stat is None:
            return False
        return not started or stat[2] == started
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def shell_started(
    store: Store,
    session_id: str,
    run_id: str,
    limit_s: float | None = None,
    agent: str | None = None,
) -> None:
    """A session's shell command is about to run. `limit_s`: the longest it can run (the agent
    kills it then); `agent`: the agent process (`agent_process()` when None)."""
    now = time.time_ns()
    deadline = now + (SHELL_RUN_EXPIRY_NS if limit_s is None else int(limit_s * 1e9) + SLACK_NS)
    who = agent_process() if agent is None else agent
    run = Run(session_id, run_id, now, deadline, who)
    store.set_meta(f"{SHELL_RUN}{session_id} {run_id}", run.encode())


def shell_finished(store: Store, session_id: str, run_id: str | None = None) -> None:
    """Forget one shell run of the session (all of them, at a turn boundary). Other sessions'
    runs that are over stay until their turn is closed (`Recorder.close_abandoned`)."""
    if run_id is None:
        store.delete_meta_prefix(f"{SHELL_RUN}{session_id} ")
    else:
        store.delete_meta(f"{SHELL_RUN}{session_id} {run_id}")


def runs(store: Store) -> list[Run]:
    """Every registered run (over or not)."""
    found = []
    for key, value in store.meta_with_prefix(SHELL_RUN):
        run = Run.decode(key, value)
        if run is not None:
            found.append(run)
    return found


def session_runs(store: Store, session_id: str) -> list[Run]:
    """The session's registered runs, oldest first."""
    return sorted((r for r in runs(store) if r.session_id == session_id), key=lambda r: r.start_ns)


def in_flight(store: Store, session_id: str | None, now_ns: int) -> list[Run]:
    """Other sessions' runs still running (not over), oldest first."""
    live = [r for r in runs(store) if r.session_id != session_id and not r.over(now_ns)]
    return sorted(live, key=lambda r: r.start_ns)


def abandoned_sessions(store: Store, now_ns: int) -> dict[str, Run]:
    """Sessions with a run that is over although no hook ended it (the agent was killed, or the
    person stopped the command and no hook said so): per session, its latest such run."""
    found: dict[str, Run] = {}
    for run in runs(store):
        if run.over(now_ns):
            prev = found.get(run.session_id)
            if prev is None or run.start_ns > prev.start_ns:
                found[run.session_id] = run
    return found


def surely_before(ctime_ns: int | None, start_ns: int) -> bool:
    """A change's ctime is surely before a command's start: by more than the kernel's coarse
    clock lags (`TICK_SLACK_NS`), or, on a file system that keeps whole seconds (the ctime has
    no fraction), by more than `CLOCK_SLACK_NS`. A deletion (no time) never is."""
    if ctime_ns is None:
        return False
    slack = CLOCK_SLACK_NS if ctime_ns % 1_000_000_000 == 0 else TICK_SLACK_NS
    return ctime_ns < start_ns - slack
