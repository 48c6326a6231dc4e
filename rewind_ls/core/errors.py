"""Errors of the core. Each names the thing it is about and the reason, so a message can be shown as is."""

from __future__ import annotations


class RewindError(Exception):
    """Base of every error rewind-ls reports to a person (CLI exit 2, LSP error message)."""

    exit_code = 2


class BadPath(RewindError):
    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path!r}: {reason}")
        self.path = path


class OutsideWorkspace(BadPath):
    def __init__(
        self, path: str, root: str, reason: str = "resolves outside the workspace"
    ) -> None:
        RewindError.__init__(self, f"{path}: {reason} ({root}); refused")
        self.path = path


class UnknownTurn(RewindError):
    def __init__(self, spec: str, reason: str) -> None:
        super().__init__(f"turn {spec}: {reason}")


class StoreError(RewindError):
    """The store cannot be used: newer schema, corrupt data, unwritable location."""


class CorruptBlob(StoreError):
    def __init__(self, digest: str, reason: str) -> None:
        super().__init__(f"stored content {digest[:12]} is damaged: {reason}")
        self.digest = digest


class ConflictError(RewindError):
    """A restore was refused because paths changed behind rewind-ls' back (nothing was written)."""

    exit_code = 3

    def __init__(self, message: str, paths: list[str], cli_hint: str = "") -> None:
        super().__init__(message)
        self.paths = paths
        # How to go on from a terminal (its flags), said by the CLI only: an editor asks instead,
        # and no editor has the flags.
        self.cli_hint = cli_hint


class BadInput(RewindError):
    """Malformed input from an agent, a file or a caller."""


# The command line's exit codes: a word and what it means. `rewind-ls --help` and the docs'
# reference are made from this. A hook always exits 0 (it never blocks the agent).
EXIT_CODES: dict[int, tuple[str, str]] = {
    0: ("ok", "done (or, with --dry-run, nothing in the way)"),
    1: ("cancelled", "you answered no at the question; nothing was written"),
    RewindError.exit_code: (
        "error",
        "the message on stderr names the thing and the reason (a bad argument too)",
    ),
    ConflictError.exit_code: (
        "conflict",
        "paths changed behind rewind-ls' back; nothing was written (a --dry-run that found "
        "conflicts too)",
    ),
}
