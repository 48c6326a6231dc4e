"""`routing.route`: where one planned path of an editor restore goes (edit, server, or both), as a
table over every input the function has. The end-to-end tests (test_server, tests/editors) show
the same routes with real clients; this table names each case."""

from __future__ import annotations

import pytest

from rewind_ls.server.routing import (
    ABSENT,
    CREATE_EDIT,
    DELETE,
    EDIT_BUFFER,
    EDIT_CLOSED,
    NOT_TEXT,
    SERVER,
    TEXT,
    ClientEditSupport,
    PathFacts,
    Route,
    route,
)

EDIT = ClientEditSupport(closed_files="edit")  # full document changes, closed files by edit
SERVE = ClientEditSupport(closed_files="server")  # the default: closed files written by the server
NO_OPS = ClientEditSupport(create=False, delete=False, closed_files="edit")  # no resource ops
FLAT = ClientEditSupport(document_changes=False, closed_files="edit")  # `changes` only


def facts(target: str = TEXT, disk: str = TEXT, open: bool = False, **kw: bool) -> PathFacts:
    return PathFacts(target=target, disk=disk, open=open, **kw)


CASES = [
    # --- deleted (target absent)
    ("deleted, open, client deletes", facts(ABSENT, open=True), SERVE, Route(DELETE, True, False)),
    ("deleted, closed, closedFiles edit", facts(ABSENT), EDIT, Route(DELETE, True, False)),
    ("deleted, closed, closedFiles server", facts(ABSENT), SERVE, SERVER),
    ("deleted, open, client cannot delete", facts(ABSENT, open=True), NO_OPS, SERVER),
    ("deleted, closed, no documentChanges", facts(ABSENT), FLAT, SERVER),
    # --- binary / not UTF-8 / too large targets: never a text edit
    ("binary target, open", facts(NOT_TEXT, open=True), EDIT, SERVER),
    ("binary target, closed", facts(NOT_TEXT), EDIT, SERVER),
    # --- open files: the buffer is edited
    ("open, buffer differs", facts(open=True), SERVE, Route(EDIT_BUFFER, True, False)),
    (
        "open, buffer already shows the target (dirty buffer, disk behind)",
        facts(open=True, buffer_is_target=True),
        SERVE,
        Route(None, True, True),
    ),
    (
        "open, mode changes",
        facts(open=True, mode_changes=True),
        EDIT,
        Route(EDIT_BUFFER, True, True),
    ),
    ("open, BOM changes", facts(open=True, bom_changes=True), EDIT, Route(EDIT_BUFFER, True, True)),
    ("open, gone from disk", facts(disk=ABSENT, open=True), EDIT, Route(EDIT_BUFFER, True, True)),
    (
        "open, binary on disk",
        facts(disk=NOT_TEXT, open=True),
        EDIT,
        Route(EDIT_BUFFER, True, False),
    ),
    ("open, no documentChanges", facts(open=True), FLAT, Route(EDIT_BUFFER, True, False)),
    # --- closed files
    ("closed, closedFiles server", facts(), SERVE, SERVER),
    ("closed, closedFiles edit", facts(), EDIT, Route(EDIT_CLOSED, True, False)),
    ("closed, no documentChanges", facts(), FLAT, Route(EDIT_CLOSED, True, False)),
    ("closed, binary or too large on disk", facts(disk=NOT_TEXT), EDIT, SERVER),
    ("closed, mode changes", facts(mode_changes=True), EDIT, SERVER),
    ("closed, BOM changes", facts(bom_changes=True), EDIT, SERVER),
    ("created, client creates", facts(disk=ABSENT), EDIT, Route(CREATE_EDIT, True, False)),
    ("created, client cannot create", facts(disk=ABSENT), NO_OPS, SERVER),
    ("created, closedFiles server", facts(disk=ABSENT), SERVE, SERVER),
]


@pytest.mark.parametrize(
    ("facts", "support", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_route(facts: PathFacts, support: ClientEditSupport, expected: Route) -> None:
    assert route(facts, support) == expected


def test_every_route_reaches_the_disk() -> None:
    """Over every combination of inputs: a path is carried by an edit part or by the server (never
    neither), an edit part is always verified, and a target that is not text never goes by edit."""
    kinds = [ABSENT, TEXT, NOT_TEXT]
    seen = 0
    for target in kinds:
        for disk in kinds:
            for open_ in (False, True):
                for flags in range(8):
                    f = PathFacts(target, disk, open_, *(bool(flags & b) for b in (1, 2, 4)))
                    for support in (EDIT, SERVE, NO_OPS, FLAT):
                        r = route(f, support)
                        assert r.server or r.edit is not None, (f, vars(support), r)
                        assert r.edit is None or r.verify, (f, r)
                        if target == NOT_TEXT:
                            assert r == SERVER, (f, r)
                        seen += 1
    assert seen == 3 * 3 * 2 * 8 * 4
