"""Following a workspace's Claude Code transcripts while the language server runs, for when hooks
do not fire: finding the workspace's transcripts (and their subagents' files), reading only the
bytes appended since the last poll, and recording what no hook recorded (`claude.recorder`),
with a workspace scan at the prompt boundaries it sees (as the hooks would have). What a transcript
held before the follower started is recorded as past, without a scan, like `import`.
"""

from __future__ import annotations

import os
import re
import time

from rewind_ls.core.agents.claude.events import Event, TranscriptParser, parse_lines, subagent_files
from rewind_ls.core.agents.claude.recorder import TranscriptRecorder
from rewind_ls.core.capture.recorder import Recorder
from rewind_ls.core.fs import config
from rewind_ls.core.fs.paths import is_within
from rewind_ls.core.store import Store


def project_slug(folder: str) -> str:
    """Claude Code's folder name for a project under `projects/`: non-alphanumerics become '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", folder)


def workspace_transcripts(root: str, seen: dict[str, bool] | None = None) -> list[str]:
    """The transcripts of sessions started in `root` or a folder below it. `seen` remembers which
    files were already looked at (the follower lists the folder every poll; a file's first line
    is read once)."""
    projects = os.path.join(config.claude_dir(), "projects")
    slug = project_slug(os.path.realpath(root))
    try:
        names = sorted(os.listdir(projects))
    except OSError:
        return []
    out: list[str] = []
    for name in names:
        if name != slug and not name.startswith(slug + "-"):
            continue
        folder = os.path.join(projects, name)
        try:
            files = sorted(os.listdir(folder))
        except OSError:
            continue
        for f in files:
            full = os.path.join(folder, f)
            if not f.endswith(".jsonl"):
                continue
            belongs = None if seen is None else seen.get(full)
            if belongs is None:
                belongs = _belongs(full, root) if os.path.isfile(full) else False
                if seen is not None and belongs is not None:
                    seen[full] = belongs  # no `cwd` yet (a new file): asked again next time
            if belongs:
                out.append(full)
    return out


def _belongs(transcript: str, root: str) -> bool | None:
    """Whether the session started inside `root` (its first line with a `cwd`); None when no
    line has one yet."""
    real_root = os.path.realpath(root)
    try:
        with open(transcript, "rb") as f:
            for line in f:
                objs = parse_lines((line,))
                cwd = objs[0].get("cwd") if objs else None
                if isinstance(cwd, str):
                    return is_within(os.path.realpath(cwd), real_root)
    except OSError:
        return False
    return None


class TranscriptFollower:
    """Follows a workspace's transcripts (and their subagents' files): each `poll` reads only the
    bytes appended since the last one and records what no hook recorded."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.offsets: dict[str, int] = {}
        self.seen: dict[str, bool] = {}
        self.parsers: dict[str, TranscriptParser] = {}
        self.recorded = 0
        self.started = time.time()

    def _files(self) -> list[tuple[str, str | None]]:
        out: list[tuple[str, str | None]] = []
        for transcript in workspace_transcripts(self.store.root, self.seen):
            out.append((transcript, None))
            out.extend(subagent_files(transcript))
        return out

    def _take_baseline(self) -> None:
        """After past events: the workspace as it is now, if the store has none yet. Otherwise
        the first live scan would be the baseline, and adopt silently what the person and the next
        turn's shell commands write until then. Not before them: a file the person changed since
        would be adopted as what rewind-ls last saw, and a rewind of the past turn would overwrite
        it without a conflict; taken after, it is a change, recorded as someone else's."""
        from rewind_ls.core.capture.scan import baseline_complete

        if not baseline_complete(self.store):
            Recorder(self.store).attribute_outside_changes()

    def poll(self) -> int:
        """Record what was appended since the last poll; returns how many turns and changes
        were recorded (0: nothing new)."""
        events: list[Event] = []
        past: list[Event] = []
        for path, agent_type in self._files():
            try:
                st = os.stat(path)
            except OSError:
                continue
            size = st.st_size
            offset = self.offsets.get(path, 0)
            if size <= offset:
                continue
            # Written to last before the follower started: what it holds so far happened then,
            # and today's disk says nothing of that time (recorded as `import` would).
            backlog = path not in self.offsets and st.st_mtime < self.started
            with open(path, "rb") as f:
                f.seek(offset)
                data = f.read(size - offset)
            end = data.rfind(b"\n")
            if end < 0:
                continue  # a line still being written: wait for its end
            self.offsets[path] = offset + end + 1
            parser = self.parsers.setdefault(path, TranscriptParser(path, agent_type))
            for line in parse_lines(data[: end + 1]):
                (past if backlog else events).extend(parser.feed(line))
        done = self._record(past, live=False)
        if past:
            self._take_baseline()
        done += self._record(events, live=True)
        self.recorded += done
        return done

    def _record(self, events: list[Event], live: bool) -> int:
        """Record a batch of events; returns how many turns and changes it recorded."""
        if not events:
            return 0
        rec = TranscriptRecorder(self.store, live=live)
        rec.record(events)
        rec.finish()
        return rec.turns + rec.changes + rec.filled
