"""Background shell jobs: their writes belong to the turn that started them while they live.

A shell command an agent starts in the background (Claude Code's Bash with `run_in_background:
true`) returns at once and keeps writing, often after its turn ended. It is registered at the call's
`PostToolUse` (`started`, once that hook's scan recorded what the job wrote so far in its turn): its
process is the agent's child running the command (Claude Code 2.1.332 runs it as `bash -c ...
eval '<command>' ...`), and a detached watcher (`core.capture.background_end`) writes the moment
that process exits beside the store. Each scan then splits what it found (`claiming`):

- a file of the job (what its turn's scans recorded from the job's start on, and what its
  processes hold open for writing now) changed while it lived (its process runs, or the change's
  ctime is not after its end) is its turn's, source `BACKGROUND_SHELL`;
- the same change when the scanning session's own shell command ran then too (ctime after that
  command's start, or a deletion), or when the job's end is not known (its process is gone and
  no watcher recorded when): either could have made it, so it is shared (`model.SHARED_SOURCE`)
  between the job's turn and the turn the scan was for (the next turn, the person's);
- everything else is attributed as if no job ran: the person's edits between turns stay theirs,
  the next turn's edit tools and commands that turn's.

An ended job is forgotten by the first scan begun after its end that deferred nothing.
"""

from __future__ import annotations

import os
import time

from rewind_ls.core.capture import shell_runs
from rewind_ls.core.model import BACKGROUND_SHELL

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rewind_ls.core.capture.scan_commit import Attribute, Change
    from rewind_ls.core.store import Store

_JOB = shell_runs.BACKGROUND_JOB  # meta key "<prefix><session> <task id>" -> Job.encode()
END_DIR = "background-ends"  # in the store's folder: one file per ended job, "<ns> sure|unsure"
_END_WAIT_S = 2.0  # how long a scan waits for the watcher's end once the process is gone
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
_MAX_PROCESSES = 256  # of a job's process tree looked at for open files


class Job:
    """One registered background job."""

    __slots__ = ("end_ns", "files", "process", "seq", "session_id", "sure", "task_id", "turn_id")

    def __init__(self, session_id: str, task_id: str, turn_id: str, seq: int, process: str):
        self.session_id = session_id
        self.task_id = task_id
        self.turn_id = turn_id
        self.seq = seq  # the store's seq when the job started: its turn's later scan rows
        self.process = process  # "pid:start-time" of its shell (no /proc: the agent's)
        self.end_ns: int | None = None  # when its process exited (None: it runs)
        self.sure = True  # False: gone, and nothing recorded when (end_ns is when seen gone)
        self.files: set[str] = set()

    def key(self) -> str:
        return f"{_JOB}{self.session_id} {self.task_id}"

    def encode(self) -> str:
        return f"{self.turn_id} {self.seq} {self.process or '-'}"

    @classmethod
    def decode(cls, key: str, value: str) -> Job | None:
        session_id, _, task_id = key[len(_JOB) :].partition(" ")
        parts = value.split()
        if len(parts) != 3 or not parts[1].isdigit():
            return None
        return cls(
            session_id, task_id, parts[0], int(parts[1]), "" if parts[2] == "-" else parts[2]
        )

    def end_file(self, store_path: str) -> str:
        return os.path.join(store_path, END_DIR, f"{self.session_id}.{self.task_id}")

    def verdict(self, ctime_ns: int | None, own_start: int | None) -> str | None:
        """Whose change of one of the job's files it is: "job", "shared" (the job's or the
        scan's turn's, no telling), None (made after the job ended: not the job's)."""
        if self.end_ns is not None:
            # A ctime never leads the clock (the coarse clock lags): every write of the job's
            # is at or before its end, so any later one is someone else's.
            if ctime_ns is not None and ctime_ns > self.end_ns:
                return None
            if ctime_ns is None or not self.sure:
                return "shared"  # a deletion has no time; an unknown end leaves it open
        if own_start is not None and not shell_runs.surely_before(ctime_ns, own_start):
            return "shared"  # the scanning session's own command ran meanwhile
        return "job"


def valid_id(task_id: object) -> bool:
    """A task id usable in a meta key and a file name (Claude Code's are 9 letters and digits)."""
    return isinstance(task_id, str) and 0 < len(task_id) <= 64 and set(task_id) <= _ID_CHARS


def started(
    store: Store, session_id: str, task_id: str, turn_id: str, command: str, seq: int
) -> str:
    """Register the background job `task_id` that `turn_id` started with `command`; `seq`: the
    store's seq before the hook's scan (what that scan recorded in the turn is the job's).
    Returns what was done, for the hook's log."""
    if not valid_id(task_id) or not valid_id(session_id):
        return f"background job {task_id!r:.40}: not an id rewind-ls can keep"
    taken = {j.process for j in jobs(store)}
    agent = shell_runs.agent_process()
    process = job_process(agent, command, taken)
    if process is None:
        # /proc shows no such process: the job ended before its call returned, and the hook's
        # scan just recorded all it wrote.
        return f"background job {task_id}: already ended"
    # No /proc (macOS): the job lives at most as long as the agent process that runs it.
    process = process or agent
    job = Job(session_id, task_id, turn_id, seq, process)
    store.set_meta(job.key(), job.encode())
    if process:
        from rewind_ls.core.fs import detached

        try:
            detached.spawn(
                "rewind_ls.core.capture.background_end", job.end_file(store.path), process
            )
        except OSError as exc:  # no watcher: its end is taken when a scan finds it gone
            return f"background job {task_id} ({process}): no end watcher ({exc.strerror or exc})"
    return f"background job {task_id} ({process or 'agent unknown'}) of {turn_id}"


def job_process(agent: str, command: str, taken: set[str]) -> str | None:
    """The agent's child process running `command` ("pid:start-time", the newest such one not in
    `taken`); "" when processes cannot be listed (no /proc), None when none runs it."""
    if not os.path.isdir("/proc"):
        return ""
    agent_pid = agent.partition(":")[0]
    # The shell quotes the command in its `-c` text: every unquoted piece of it is there as is.
    pieces = [p.strip() for p in _split_quotes(command)]
    pieces = [p for p in pieces if p]
    best: tuple[int, str] | None = None
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        stat = shell_runs.proc_stat(int(entry))
        if stat is None or str(stat[1]) != agent_pid:
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\x00", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        process = f"{entry}:{stat[2]}"
        if process in taken or not pieces or not all(p in cmdline for p in pieces):
            continue
        started_at = int(stat[2]) if stat[2].isdigit() else 0
        if best is None or started_at > best[0]:
            best = (started_at, process)
    return None if best is None else best[1]


def _split_quotes(command: str) -> list[str]:
    out = [command]
    for quote in ("'", '"', "\\", "\n"):
        out = [piece for part in out for piece in part.split(quote)]
    return out


def jobs(store: Store) -> list[Job]:
    """Every registered job (running or ended), oldest first by key."""
    found = []
    for key, value in store.meta_with_prefix(_JOB):
        job = Job.decode(key, value)
        if job is not None:
            found.append(job)
    return found


def _read_end(path: str) -> tuple[int, bool] | None:
    try:
        with open(path, "rb") as f:
            parts = f.read(64).decode("ascii", "replace").split()
    except OSError:
        return None
    if len(parts) != 2 or not parts[0].isdigit():
        return None
    return int(parts[0]), parts[1] == "sure"


def write_end(path: str, end_ns: int, sure: bool) -> None:
    """Record a job's end (atomically: a scan never reads half of it)."""
    from rewind_ls.core.fs.config import ensure_private_dir

    ensure_private_dir(os.path.dirname(path))
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(f"{end_ns} {'sure' if sure else 'unsure'}\n")
    os.replace(tmp, path)


def _settle_end(store: Store, job: Job) -> None:
    """Fill in the job's end: the watcher's record, else none while its process runs, else (gone
    and no record after a short wait for the watcher) now, as an unsure end."""
    path = job.end_file(store.path)
    end = _read_end(path)
    if end is None and shell_runs.agent_alive(job.process):
        return
    deadline = time.monotonic() + _END_WAIT_S
    while end is None and time.monotonic() < deadline:
        time.sleep(0.05)
        end = _read_end(path)
    if end is None:
        end = (time.time_ns(), False)
        try:
            write_end(path, *end)
        except OSError:
            pass
    job.end_ns, job.sure = end


def _files(store: Store, job: Job) -> set[str]:
    """The job's files: what its turn's scans recorded from its start on, and what its processes
    hold open for writing now."""
    files = open_for_write(store.root, job.process) if job.end_ns is None else set()
    for c in store.changes(job.turn_id):
        scanned = c.source in ("scan", BACKGROUND_SHELL) or c.source.startswith("shared:")
        if scanned and max(c.seq, c.after_seq or 0) > job.seq:
            files.add(c.path)
    return files


def open_for_write(root: str, process: str) -> set[str]:
    """Workspace files (relative paths) that `process` ("pid:start") or its descendants hold open
    for writing now (a `cmd > log` loop keeps its log open); none without /proc."""
    pid = process.partition(":")[0]
    if not pid.isdigit():
        return set()
    top = root.rstrip("/") + "/"
    out: set[str] = set()
    todo: list[str] = [pid]
    seen: set[str] = set()
    while todo and len(seen) < _MAX_PROCESSES:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children", "rb") as f:
                    todo.extend(f.read().decode("ascii", "replace").split())
            fds = os.listdir(f"/proc/{p}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(f"/proc/{p}/fd/{fd}")
                if not target.startswith(top) or not _writable(p, fd):
                    continue
            except OSError:
                continue
            out.add(target[len(top) :])
    return out


def _writable(pid: str, fd: str) -> bool:
    with open(f"/proc/{pid}/fdinfo/{fd}", "rb") as f:
        for line in f:
            if line.startswith(b"flags:"):
                return int(line.split()[1], 8) & 3 != 0  # O_WRONLY or O_RDWR
    return False


def active(store: Store) -> list[Job]:
    """The registered jobs with their end (if any) and files, for one scan."""
    found = []
    for job in jobs(store):
        if store.turn(job.turn_id) is None:
            continue  # its turn is gone (retention): nothing to credit
        _settle_end(store, job)
        job.files = _files(store, job)
        if job.files:
            found.append(job)
    return found


def claiming(store: Store, attribute: Attribute, own_start: int | None) -> Attribute:
    """`attribute`, with what the background jobs wrote taken out first (module docstring).
    `own_start`: when the scanning session's own shell command started (None: none runs)."""
    live = active(store)
    if not live:
        return attribute
    root = store.root.rstrip("/") + "/"

    def attribute_background(found: list[Change]) -> str | None:
        mine: list[tuple[Job, Change]] = []
        shared: list[tuple[Job, Change]] = []
        rest: list[Change] = []
        for change in found:
            job = next((j for j in live if change[0] in j.files), None)
            try:
                ctime: int | None = os.lstat(root + change[0]).st_ctime_ns
            except OSError:
                ctime = None
            verdict = None if job is None else job.verdict(ctime, own_start)
            if verdict is None or job is None:
                rest.append(change)
            else:
                (mine if verdict == "job" else shared).append((job, change))
        turn = attribute(rest + [c for _, c in shared]) if rest or shared else None
        for job, (rel, old, new) in mine:
            store.record_as(job.turn_id, rel, old, new, BACKGROUND_SHELL)
        for job, (rel, old, new) in shared:
            if turn is None or turn == job.turn_id:
                store.record_as(job.turn_id, rel, old, new, BACKGROUND_SHELL)
            else:
                store.record_shared([job.turn_id, turn], rel, old, new)
        return turn

    return attribute_background


def forget_ended(store: Store, scan_start_ns: int) -> None:
    """Forget the jobs that ended before a scan began (that scan saw all they wrote), and those
    whose turn is gone."""
    for job in jobs(store):
        end = _read_end(job.end_file(store.path))
        ended = end is not None and end[0] < scan_start_ns - shell_runs.TICK_SLACK_NS
        if ended or store.turn(job.turn_id) is None:
            store.delete_meta(job.key())
            try:
                os.unlink(job.end_file(store.path))
            except OSError:
                pass
