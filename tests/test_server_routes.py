"""The server's routes come from the protocol's tables: every `rewind/*` request of METHODS and
every command of COMMANDS has exactly one handler, registered on the server in the tables' order."""

from __future__ import annotations

import pytest

from rewind_ls.protocol.methods import COMMANDS, METHODS, NOTIFICATIONS
from rewind_ls.server import app, lsp


def test_every_table_line_has_its_handler_on_the_server() -> None:
    server = app.build()
    features = server.protocol.fm.features
    requests = [m for m in METHODS if m not in NOTIFICATIONS]
    assert [m for m in features if m.startswith("rewind/")] == requests
    assert list(server.protocol.fm.commands) == list(COMMANDS)


def test_a_table_line_without_a_handler_stops_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(lsp.REQUESTS, "rewind/blame")
    with pytest.raises(RuntimeError, match="no handler for rewind/blame"):
        app.build()


def test_a_handler_needs_a_table_line() -> None:
    with pytest.raises(KeyError, match="rewind/nope"):
        lsp.request("rewind/nope")
    with pytest.raises(KeyError, match="rewind/didChangeTurns"):
        lsp.request("rewind/didChangeTurns")  # a notification the server sends, not a request
    with pytest.raises(KeyError, match=r"rewind\.nope"):
        lsp.command("rewind.nope")


def test_every_handler_takes_the_params_model_its_table_line_names() -> None:
    """The model a request is parsed with comes from METHODS; a handler annotated with another one
    would mislead its reader (and mypy) about what it receives."""
    import typing

    app.build()  # imports every handler module
    wrong = []
    for method, handler in lsp.REQUESTS.items():
        hints = typing.get_type_hints(handler)
        params = [v for k, v in hints.items() if k != "return"]
        if params[-1] is not METHODS[method][0]:
            wrong.append(
                f"{method}: {handler.__name__} takes {params[-1]}, METHODS says {METHODS[method][0]}"
            )
    assert not wrong, "\n".join(wrong)
