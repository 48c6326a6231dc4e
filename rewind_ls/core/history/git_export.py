"""A session as git history: `rewind-ls export --git BRANCH [--session ID]`.

One commit holds the workspace at the start of the session's first turn (its parent: `HEAD` when
the repository has commits), then one commit per finished turn holds the workspace at the turn's
end (`snapshot.states_at`), the prompt as its subject, and trailers naming the agent, the session,
the turn and its time. Only git's plumbing, on a temporary index outside the repository
(`GIT_INDEX_FILE`, `read-tree`, `update-index`, `write-tree`, `commit-tree`, `update-ref`; the
contents through one `fast-import`, a pack from a pipe, where `hash-object` needed a temporary
file per content: 11,000 of them took 30 s of a 100-turn export on a loaded machine): the person's `HEAD`, index, work tree and other branches are never touched; the
only things written into the repository are objects and BRANCH itself.

Commits are made reproducibly (fixed identity, the turns' own times, no signature), so an export
run again after the session went on makes the same commits for the same turns and the branch
moves by a fast-forward. A turn still running is not exported yet (its end is not known). BRANCH
is refused when it exists and was not written by this export for this session (its tip carries
no `Rewind-Session` trailer naming it) unless forced, and when a work tree has it checked out.

The first commit starts from the parent's tree: paths rewind-ls has no record of (files its
ignore rules leave out, which git may still track) keep what the parent holds, so `git diff
HEAD BRANCH` shows the session and not the ignore rules.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from rewind_ls.core.errors import CorruptBlob, RewindError
from rewind_ls.core.history.snapshot import Snapshot, end_seq, seen_paths, states_at
from rewind_ls.core.model import FILE, Session, Turn, TurnState, Version
from rewind_ls.core.store import Store

AUTHOR_EMAIL = "rewind-ls@localhost"
SUBJECT_CHARS = 72
TRAILER_SESSION = "Rewind-Session"
TRAILER_TURN_ID = "Rewind-Turn-Id"
TRAILER_STATE = "Rewind-State"
HASH_BATCH = 500  # contents read from the store per pass


class GitExported(NamedTuple):
    branch: str
    ref: str
    tip: str
    previous: str | None  # the branch's tip before, None when it was created
    fast_forward: bool  # the old tip is an ancestor of the new one (or there was none)
    commits: int  # commits on the branch for this session (start + turns)
    turns: list[int]  # the turn numbers exported
    running: list[int]  # turns not exported yet: still running
    unwritable: list[str]  # files in some state whose content rewind-ls does not hold


class _Git:
    """git run in the workspace, with the temporary index for the commands that use one."""

    def __init__(self, root: str, index: str) -> None:
        self.root = root
        self.env = {**os.environ, "GIT_INDEX_FILE": index}
        for name in ("GIT_DIR", "GIT_WORK_TREE"):
            self.env.pop(name, None)  # the workspace's own repository, whatever the caller's

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        ok: tuple[int, ...] = (0,),
        status: bool = False,
    ) -> str:
        """git's output; with `status`, its exit status instead (one of `ok`)."""
        try:
            proc = subprocess.run(
                ["git", "-c", "commit.gpgSign=false", *args],
                cwd=self.root,
                env=self.env,
                input=input,
                capture_output=True,
                timeout=600,
            )
        except FileNotFoundError:
            raise RewindError("git: not found on PATH; export --git needs git") from None
        if proc.returncode not in ok:
            why = proc.stderr.decode("utf-8", "replace").strip() or f"exit {proc.returncode}"
            raise RewindError(f"git {args[0]} in {self.root}: {why}")
        if status:
            return str(proc.returncode)
        return proc.stdout.decode("utf-8", "surrogateescape")

    def commit_or_none(self, rev: str) -> str | None:
        out = self.run("rev-parse", "-q", "--verify", f"{rev}^{{commit}}", ok=(0, 1)).strip()
        return out or None


def export_git(store: Store, session: Session, branch: str, force: bool = False) -> GitExported:
    """Write `session`'s turns as commits on `branch` of the workspace's repository."""
    turns = list(store.turns(session.id))
    turns.sort(key=lambda t: t.seq)
    done = [t for t in turns if t.state != TurnState.OPEN]
    running = [t.number for t in turns if t.state == TurnState.OPEN]
    if not done:
        what = "has no finished turn" if turns else "has no turns"
        raise RewindError(f"session {session.id[:8]} {what}; nothing to export")
    with tempfile.TemporaryDirectory(prefix="rewind-git-export-") as scratch:
        git = _Git(store.root, os.path.join(scratch, "index"))
        ref = _branch_ref(git, branch)
        previous = git.commit_or_none(ref)
        chain = _our_chain(git, ref, previous, session, force)
        parent = chain.parent
        prefix = git.run("rev-parse", "--show-prefix").strip()
        seqs = [done[0].seq] + [end_seq(store, t) for t in done]
        by_seq = {s.seq: s for s in states_at(store, sorted(seqs))}
        states = [by_seq[s] for s in seqs]
        keys = [f"start:{done[0].id}"] + [t.id for t in done]
        stamps = state_stamps(states)
        # The commits an earlier run made for the same turns holding the same states are kept as
        # they are: a rerun adds only what is new (and rebuilds from the first that differs).
        kept = 0
        for (key, stamp), old in zip(zip(keys, stamps, strict=True), chain.commits, strict=False):
            if (old.key, old.stamp) != (key, stamp):
                break
            kept += 1
        if kept:
            base: str | None = chain.commits[kept - 1].commit
        else:
            base = parent
        if kept < len(states):
            blobs = _write_blobs(git, store, states, kept)
            if base is not None:
                git.run("read-tree", base)  # into the temporary index only (no -u: no work tree)
            tip = _commit_states(
                git, store, session, done, states, stamps, kept, blobs, base, prefix
            )
        else:
            assert base is not None
            tip = base
        fast_forward = previous is None or previous == tip or _is_ancestor(git, previous, tip)
        if previous != tip:
            # Compare-and-swap: refused if the branch moved since it was read ("" = must not exist).
            git.run("update-ref", "-m", "rewind-ls export --git", ref, tip, previous or "")
    unwritable = sorted({p for s in states for p in s.unwritable})
    return GitExported(
        branch,
        ref,
        tip,
        previous,
        fast_forward,
        len(done) + 1,
        [t.number for t in done],
        running,
        unwritable,
    )


def _branch_ref(git: _Git, branch: str) -> str:
    """refs/heads/BRANCH, after checking the name and that no work tree has it checked out."""
    name = branch.removeprefix("refs/heads/")
    out = git.run("check-ref-format", "--branch", name, ok=(0, 1, 128)).strip()
    if not out or out != name:
        raise RewindError(f"{branch}: not a valid branch name")
    inside = git.run("rev-parse", "--is-inside-work-tree", ok=(0, 128)).strip()
    if inside != "true":
        raise RewindError(
            f"{git.root}: not in a git repository; export --git writes the session as a branch of "
            "the workspace's repository (`git init` one first, or use export TURN --to DIR)"
        )
    ref = f"refs/heads/{name}"
    for line in git.run("worktree", "list", "--porcelain").splitlines():
        if line == f"branch {ref}":
            raise RewindError(
                f"{branch}: checked out in a work tree; export writes only a branch nobody has "
                "checked out (HEAD and the work tree are never touched): name another branch"
            )
    return ref


class _Commit(NamedTuple):
    commit: str
    key: str  # Rewind-Turn-Id: the turn's id, "start:<first turn's id>" for the first commit
    stamp: str  # Rewind-State: `state_stamp` of the tree it holds


class _Chain(NamedTuple):
    parent: str | None  # the first commit's parent
    commits: list[_Commit]  # this session's commits on the branch, oldest first


def _our_chain(git: _Git, ref: str, previous: str | None, session: Session, force: bool) -> _Chain:
    """The branch's commits an earlier export of this session made, and the parent of the first
    (so a rerun makes the same commits); with no branch yet, HEAD's commit (None in a repository
    without commits) and no commits."""
    if previous is None:
        return _Chain(git.commit_or_none("HEAD"), [])
    trailers = [
        f"%(trailers:key={key},valueonly,separator=%x2c)"
        for key in (TRAILER_SESSION, TRAILER_TURN_ID, TRAILER_STATE)
    ]
    fields = ["%H", "%P", *trailers]
    chain = git.run("log", "--first-parent", "--format=" + "%x1f".join(fields), previous)
    parent: str | None = None
    ours: list[_Commit] = []
    for line in chain.splitlines():
        commit, parents, sid, key, stamp = [*line.split("\x1f"), "", "", "", ""][:5]
        if sid.strip() != session.id:
            break
        ours.append(_Commit(commit, key.strip(), stamp.strip()))
        parent = parents.split()[0] if parents.split() else None
    if not ours:
        if not force:
            raise RewindError(
                f"{ref.removeprefix('refs/heads/')}: the branch exists and was not written by "
                f"export --git of session {session.id[:8]}; name a new branch (or --force to "
                "replace it; the old tip stays in the reflog)"
            )
        return _Chain(git.commit_or_none("HEAD"), [])
    ours.reverse()
    return _Chain(parent, ours)


def state_stamps(states: Sequence[Snapshot]) -> list[str]:
    """A short digest of each state's files (path, content, executable bit): equal stamps, equal
    trees, without reading any content. A sum of one digest per file, so each next state's is the
    last one's moved by the files that changed (`_changed`), not all of them again."""

    def one(path: str, v: Version) -> int:
        text = f"{path}\0{v.kind.value}\0{v.hash}\0{(v.mode or 0) & 0o111:o}"
        return int.from_bytes(hashlib.sha256(text.encode()).digest()[:16], "big")

    out: list[str] = []
    total = 0
    for i, state in enumerate(states):
        if i > 0:
            old = states[i - 1].files
            for path, v in old.items():
                now = state.files.get(path)
                if now is not v and now != v:
                    total -= one(path, v)
        for path, v in _changed(states, i).items():
            total += one(path, v)
        out.append(f"{total % (1 << 128):032x}")
    return out


def _changed(states: Sequence[Snapshot], i: int) -> dict[str, Version]:
    """The files of state `i` that differ from state `i - 1` (all of them for the first)."""
    if i == 0:
        return dict(states[0].files)
    old = states[i - 1].files
    # The states share their unchanged Version objects (`states_at`): `is` settles most at once.
    return {p: v for p, v in states[i].files.items() if old.get(p) is not v and old.get(p) != v}


def _write_blobs(git: _Git, store: Store, states: Sequence[Snapshot], start: int) -> dict[str, str]:
    """rewind-ls content hash -> git blob id, for the contents states `start` on bring in,
    written into the repository's objects by one `git fast-import` (a pack, from a pipe: no
    temporary file per content) with the bytes as recorded (no end-of-line or clean filter
    runs). The ids are computed here the way git names a blob, then checked to be in the
    repository (`cat-file --batch-check`)."""
    wanted: dict[str, str] = {}  # content hash -> a path holding it (to name a damaged one)
    for i in range(start, len(states)):
        for path, version in _changed(states, i).items():
            if version.kind == FILE and version.hash is not None:
                wanted.setdefault(version.hash, path)
    if not wanted:
        return {}
    algorithm = git.run("rev-parse", "--show-object-format").strip() or "sha1"
    hashes = list(wanted)
    out: dict[str, str] = {}
    proc = subprocess.Popen(
        ["git", "fast-import", "--quiet", "--done"],
        cwd=git.root,
        env=git.env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    try:
        for first in range(0, len(hashes), HASH_BATCH):
            part = hashes[first : first + HASH_BATCH]
            try:
                contents = store.get_blobs(part)  # each pack decompressed once for the batch
            except CorruptBlob:
                contents = {}
            for h in part:
                data = contents.get(h)
                if data is None:
                    try:
                        data = store.get_blob(h)
                    except CorruptBlob as exc:
                        raise RewindError(
                            f"{wanted[h]}: its recorded content is damaged: {exc}"
                        ) from exc
                out[h] = hashlib.new(algorithm, b"blob %d\0" % len(data) + data).hexdigest()
                proc.stdin.write(b"blob\ndata %d\n" % len(data))
                proc.stdin.write(data)
                proc.stdin.write(b"\n")
        proc.stdin.write(b"done\n")
        proc.stdin.close()
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    errors = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
    if proc.wait() != 0:
        raise RewindError(f"git fast-import in {git.root}: {errors.strip() or 'failed'}")
    missing = [
        line
        for line in git.run(
            "cat-file", "--batch-check", input="\n".join(out.values()).encode() + b"\n"
        ).splitlines()
        if line.endswith(" missing")
    ]
    if missing:
        raise RewindError(f"git fast-import in {git.root}: {len(missing)} contents not written")
    return out


def _entry(version: Version, blobs: Mapping[str, str]) -> tuple[str, str] | None:
    """(mode, blob id) of a file in git, None when its content is not kept."""
    if version.kind != FILE or version.hash is None:
        return None
    mode = "100755" if (version.mode or 0) & 0o111 else "100644"
    return mode, blobs[version.hash]


def _commit_states(
    git: _Git,
    store: Store,
    session: Session,
    turns: Sequence[Turn],
    states: Sequence[Snapshot],
    stamps: Sequence[str],
    start: int,
    blobs: Mapping[str, str],
    parent: str | None,
    prefix: str,
) -> str:
    """The commits of states `start` on (0: the start commit, then one per turn), the temporary
    index holding `parent`'s tree; returns the last."""
    records: list[str] = []
    if start == 0 and parent is not None:
        # The start: every path rewind-ls has a record of takes its state (absent ones removed);
        # the rest of the parent's tree stays as it is.
        seen = seen_paths(store, states[0].seq)
        for full in git.run("ls-files", "-z", "--full-name", "--", ":/").split("\0"):
            rel = full[len(prefix) :] if full.startswith(prefix) else None
            if rel and rel in seen and rel not in states[0].files:
                records.append(f"0 {'0' * 40}\t{full}")
    commit = parent
    agent = session.agent or "agent"
    for i in range(start, len(states)):
        state = states[i]
        for path, version in _changed(states, i).items():
            entry = _entry(version, blobs)
            if entry is not None:  # else not kept: the parent's content (or nothing) stays, named
                records.append(f"{entry[0]} {entry[1]}\t{prefix}{path}")
        if i > 0:
            for path in states[i - 1].files:
                if path not in state.files:
                    records.append(f"0 {'0' * 40}\t{prefix}{path}")
        if records:
            git.run("update-index", "-z", "--index-info", input="\0".join(records).encode() + b"\0")
        records = []
        tree = git.run("write-tree").strip()
        if i == 0:
            first = turns[0]
            message = (
                f"Before session {session.id[:8]} ({agent})\n\n"
                f"The workspace at the start of turn {first.number}, as rewind-ls recorded it.\n\n"
                f"{TRAILER_SESSION}: {session.id}\nRewind-Agent: {agent}\n"
                f"Rewind-Turn: start of {first.number}\n"
                f"{TRAILER_TURN_ID}: start:{first.id}\n{TRAILER_STATE}: {stamps[0]}\n"
            )
            author_when = when = first.started_at
        else:
            turn = turns[i - 1]
            message = _message(turn, session, agent, stamps[i])
            author_when = turn.started_at
            when = turn.ended_at or turn.started_at
        commit = _commit_tree(git, tree, commit, message, agent, author_when, when)
    assert commit is not None
    return commit


def _message(turn: Turn, session: Session, agent: str, stamp: str) -> str:
    prompt = turn.prompt.strip() or "(no prompt)"
    first_line = prompt.splitlines()[0]
    subject = first_line if len(first_line) <= SUBJECT_CHARS else first_line[:69] + "..."
    body = "" if prompt == subject else f"{prompt}\n\n"
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(turn.started_at))
    return (
        f"{subject}\n\n{body}"
        f"{TRAILER_SESSION}: {session.id}\nRewind-Agent: {agent}\n"
        f"Rewind-Turn: {turn.number}\n{TRAILER_TURN_ID}: {turn.id}\nRewind-Time: {when}\n"
        f"{TRAILER_STATE}: {stamp}\n"
    )


def _commit_tree(
    git: _Git,
    tree: str,
    parent: str | None,
    message: str,
    agent: str,
    author_when: float,
    when: float,
) -> str:
    env_before = git.env
    git.env = {
        **env_before,
        "GIT_AUTHOR_NAME": agent,
        "GIT_AUTHOR_EMAIL": AUTHOR_EMAIL,
        "GIT_AUTHOR_DATE": f"@{int(author_when)} +0000",
        "GIT_COMMITTER_NAME": "rewind-ls",
        "GIT_COMMITTER_EMAIL": AUTHOR_EMAIL,
        "GIT_COMMITTER_DATE": f"@{int(when)} +0000",
    }
    try:
        args = ["commit-tree", tree] + (["-p", parent] if parent else [])
        # The message on stdin, kept as it is (commit-tree does not strip comments or spaces).
        return git.run(*args, input=message.encode("utf-8", "surrogateescape")).strip()
    finally:
        git.env = env_before


def _is_ancestor(git: _Git, old: str, new: str) -> bool:
    return git.run("merge-base", "--is-ancestor", old, new, ok=(0, 1), status=True) == "0"
