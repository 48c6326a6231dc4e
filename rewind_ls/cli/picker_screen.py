"""The full-screen turn picker (prompt_toolkit): a filter line, the turns newest first, a preview of
the highlighted turn's diff, and on Enter the menu of actions. Keyboard only; fits 80x24.

Imported only by the commands that open it: prompt_toolkit never loads for `turns`, `diff TURN`
or the agent's hook."""

from __future__ import annotations

from collections.abc import Callable

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.data_structures import Point
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import ANSI, StyleAndTextTuples
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import HSplit, Layout, VSplit, Window
from prompt_toolkit.layout.controls import BufferControl, FormattedTextControl
from prompt_toolkit.layout.dimension import Dimension
from prompt_toolkit.styles import Style

from rewind_ls.cli.picker_rows import Action, Entry, actions_for, row_columns
from rewind_ls.cli.style import colour_diff
from rewind_ls.core.store import Store

STYLE = Style.from_dict(
    {
        "title": "bold",
        "state": "ansiyellow",
        "head": "",
        "prompt": "",
        "files": "ansibrightblack",
        "session0": "ansicyan",
        "session1": "ansimagenta",
        "session2": "ansigreen",
        "session3": "ansiblue",
        "session4": "ansiyellow",
        "session5": "ansired",
        "selected": "reverse",
        "rule": "ansibrightblack",
        "help": "ansibrightblack",
        "menu.selected": "reverse bold",
    }
)


class _Picker:
    def __init__(
        self, store: Store, entries: list[Entry], state: str, with_menu: bool, title: str
    ) -> None:
        self.store = store
        self.entries = entries
        self.shown = entries
        self.state = state
        self.with_menu = with_menu
        self.title = title
        self.selected = 0
        self.menu: list[Action] | None = None
        self.menu_index = 0
        self.diffs: dict[str, str] = {}
        self.filter = Buffer(multiline=False, on_text_changed=self._refilter)

    # --- state ----------------------------------------------------------------------------------

    def _refilter(self, _: Buffer) -> None:
        words = self.filter.text.lower().split()
        self.shown = [e for e in self.entries if all(w in e.search_text() for w in words)]
        self.selected = 0

    def current(self) -> Entry | None:
        return self.shown[self.selected] if self.shown else None

    def move(self, delta: int) -> None:
        if self.menu is not None:
            self.menu_index = max(0, min(len(self.menu) - 1, self.menu_index + delta))
        elif self.shown:
            self.selected = max(0, min(len(self.shown) - 1, self.selected + delta))

    def diff_of(self, entry: Entry) -> str:
        if entry.turn_id not in self.diffs:
            from rewind_ls.core.history.diff import turn_diff

            turn = self.store.turn(entry.turn_id)
            parts = turn_diff(self.store, turn) if turn is not None else []
            text = "".join(d["diff"] for d in parts) or "(this turn changed no file)\n"
            self.diffs[entry.turn_id] = colour_diff(text, True)
        return self.diffs[entry.turn_id]

    # --- rendering ------------------------------------------------------------------------------

    def header(self) -> StyleAndTextTuples:
        return [("class:title", f" rewind-ls · {self.title}  "), ("class:state", self.state)]

    def rows(self) -> StyleAndTextTuples:
        from prompt_toolkit.application.current import get_app

        width = get_app().output.get_size().columns
        out: StyleAndTextTuples = []
        if not self.shown:
            return [("", " (no turn matches the filter)")]
        for i, entry in enumerate(self.shown):
            chosen = i == self.selected
            extra = " class:selected" if chosen else ""
            # A pointer as well as reverse video: visible without colour and in text captures.
            out.append((f"class:head{extra}", "›" if chosen else " "))
            out.extend((f"class:{cls}{extra}", text) for cls, text in row_columns(entry, width - 1))
            out.append(("", "\n"))
        out.pop()
        return out

    def rule(self) -> StyleAndTextTuples:
        entry = self.current()
        if entry is None:
            return [("class:rule", "─" * 200)]
        what = "what to do with" if self.menu is not None else "preview of"
        text = f"─ {what} turn {entry.number} ({entry.who}): {entry.title} "
        return [("class:rule", text[:150] + "─" * 200)]

    def lower(self) -> StyleAndTextTuples:
        entry = self.current()
        if entry is None:
            return []
        if self.menu is not None:
            out: StyleAndTextTuples = []
            for i, action in enumerate(self.menu):
                chosen = i == self.menu_index
                style = "class:menu.selected" if chosen else ""
                # A pointer as well as reverse video, as in the list.
                out.append(("", "›" if chosen else " "))
                out.append((style, f" {i + 1}. {action.label}  "))
                out.append(("", "\n"))
            return out
        from prompt_toolkit.formatted_text import to_formatted_text

        return to_formatted_text(ANSI(self.diff_of(entry)))

    def help(self) -> StyleAndTextTuples:
        if self.menu is not None:
            text = " ↑↓ move  1-9 choose  Enter choose  Esc back"
        else:
            pick = "Enter: actions" if self.with_menu else "Enter: choose"
            text = f" ↑↓ PgUp PgDn move  type to filter  {pick}  Esc: quit"
        return [("class:help", text)]

    # --- application ----------------------------------------------------------------------------

    def build(self) -> Application[tuple[Entry, Action | None] | None]:
        kb = KeyBindings()
        self._bind_moves(kb)
        self._bind_choices(kb)
        self._bind_menu(kb)
        return Application(
            layout=Layout(self._layout(), focused_element=self.filter),
            key_bindings=kb,
            style=STYLE,
            full_screen=True,
            mouse_support=False,
        )

    def _bind_moves(self, kb: KeyBindings) -> None:
        """Arrows, Ctrl-P/N and the page keys move the selection."""
        steps = {"up": -1, "c-p": -1, "down": 1, "c-n": 1, "pageup": -8, "pagedown": 8}
        for key, step in steps.items():
            kb.add(key)(self._mover(step))

    def _mover(self, step: int) -> Callable[[KeyPressEvent], None]:
        def move(event: KeyPressEvent) -> None:
            self.move(step)

        return move

    def _bind_choices(self, kb: KeyBindings) -> None:
        """Enter chooses (or opens the actions menu), Escape steps back, Ctrl-C/D quit."""
        kb.add("enter")(self._enter)
        kb.add("escape", eager=True)(self._escape)

        @kb.add("c-c")
        @kb.add("c-d")
        def _quit(event: KeyPressEvent) -> None:
            event.app.exit(result=None)

    def _enter(self, event: KeyPressEvent) -> None:
        entry = self.current()
        if entry is None:
            return
        if self.menu is not None:
            event.app.exit(result=(entry, self.menu[self.menu_index]))
        elif self.with_menu:
            self.menu = actions_for(entry)
            self.menu_index = 0
        else:
            event.app.exit(result=(entry, None))

    def _escape(self, event: KeyPressEvent) -> None:
        if self.menu is not None:
            self.menu = None
        elif self.filter.text:
            self.filter.text = ""
        else:
            event.app.exit(result=None)

    def _bind_menu(self, kb: KeyBindings) -> None:
        """In the actions menu, a digit chooses an action and other typing is swallowed."""
        for digit in "123456789":

            @kb.add(digit, filter=_in_menu(self))
            def _choose(event: KeyPressEvent) -> None:
                index = int(event.key_sequence[0].key) - 1
                entry = self.current()
                if self.menu is not None and entry is not None and index < len(self.menu):
                    event.app.exit(result=(entry, self.menu[index]))

        @kb.add("<any>", filter=_in_menu(self))
        def _swallow(event: KeyPressEvent) -> None:
            """In the menu, typing does not edit the filter."""

    def _layout(self) -> HSplit:
        """Header, filter line, the list, a rule, the selected entry's details, the help line."""
        filter_line = VSplit(
            [
                Window(FormattedTextControl([("class:help", " filter: ")]), width=9),
                Window(BufferControl(self.filter), height=1),
            ],
            height=1,
        )
        listing = Window(
            FormattedTextControl(
                self.rows, get_cursor_position=lambda: Point(0, self.selected), show_cursor=False
            ),
            height=Dimension(min=3, weight=1),
            wrap_lines=False,
        )
        lower = Window(
            FormattedTextControl(self.lower, show_cursor=False),
            height=Dimension(min=3, weight=1),
            wrap_lines=False,
        )
        return HSplit(
            [
                Window(FormattedTextControl(self.header), height=1),
                filter_line,
                listing,
                Window(FormattedTextControl(self.rule), height=1),
                lower,
                Window(FormattedTextControl(self.help), height=1),
            ]
        )


def _in_menu(picker: _Picker) -> Condition:
    return Condition(lambda: picker.menu is not None)


def run_picker(
    store: Store, entries: list[Entry], state: str, with_menu: bool, title: str
) -> tuple[Entry, Action | None] | None:
    """Run the picker; the chosen entry and action (None for the action when `with_menu` is off),
    or None when the person quit."""
    app = _Picker(store, entries, state, with_menu, title).build()
    return app.run()
