"""Generate the VS Code client's TypeScript types from the protocol models:
`python -m rewind_ls.protocol.typescript [OUT]` (default: editors/vscode/src/protocol.ts).

The file is a build product (git-ignored): the extension build and CI write it before `tsc`, so a
client that reads a field the models do not define fails to compile. Results' fields are always
on the wire (the server dumps defaults too), so they are required in TypeScript; params' fields
with a default are optional (the client may leave them out).
"""

from __future__ import annotations

import sys
import types
import typing
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import BaseModel

from rewind_ls.protocol import (
    base,
    cli_output,
    contents,
    history,
    methods,
    recording,
    restore,
    review,
    turns,
)

DEFAULT_OUT = Path(__file__).resolve().parents[2] / "editors" / "vscode" / "src" / "protocol.ts"
# The modules of the models, in the order their types are written (each after what it uses).
MODULES = (base, turns, restore, contents, history, recording, review, methods, cli_output)
_BASES = (base.Params, base.Result, cli_output.Output)
_SCALARS: dict[Any, str] = {str: "string", int: "number", float: "number", bool: "boolean"}


def _aliases() -> dict[object, str]:
    """Literal types the modules name (Scope, Mode, ...): emitted once, referred to by name."""
    return {
        value: name
        for module in MODULES
        for name, value in vars(module).items()
        if not name.startswith("_") and get_origin(value) is Literal
    }


def models() -> list[type[BaseModel]]:
    """Every model of the modules, in definition order (the bases excepted)."""
    return [
        value
        for module in MODULES
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, BaseModel)
        and value.__module__ == module.__name__
        and value not in _BASES
    ]


def ts_type(annotation: Any, aliases: dict[object, str]) -> str:
    if annotation in aliases:
        return aliases[annotation]
    if annotation is type(None):
        return "null"
    if annotation is Any:
        return "unknown"
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation.__name__
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return " | ".join(f"'{a}'" for a in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(ts_type(a, aliases) for a in args)
    if origin is list:
        inner = ts_type(args[0], aliases)
        return f"({inner})[]" if " " in inner else f"{inner}[]"
    if origin is dict:
        return f"Record<{ts_type(args[0], aliases)}, {ts_type(args[1], aliases)}>"
    raise TypeError(f"protocol_ts: no TypeScript for {annotation!r}: add it to ts_type")


def _interface(model: type[BaseModel], aliases: dict[object, str]) -> list[str]:
    is_params = issubclass(model, base.Params)
    lines = []
    if model.__doc__ and not model.__doc__.startswith(model.__name__ + "("):
        lines.append(f"/** {' '.join(model.__doc__.split())} */")
    lines.append(f"export interface {model.__name__} {{")
    for name, field in model.model_fields.items():
        if field.description:
            lines.append(f"  /** {' '.join(field.description.split())} */")
        optional = "?" if is_params and not field.is_required() else ""
        key = field.alias or name
        lines.append(f"  {key}{optional}: {ts_type(field.annotation, aliases)};")
    lines.append("}")
    return lines


def _consts(name: str, doc: str, entries: dict[str, str]) -> list[str]:
    lines = [f"/** {doc} */", f"export const {name} = {{"]
    lines += [f"  {key}: '{value}'," for key, value in entries.items()]
    return [*lines, "} as const;"]


def render() -> str:
    aliases = _aliases()
    out = [
        "// Generated from rewind_ls/protocol/ by `python -m rewind_ls.protocol.typescript`:",
        "// do not edit (the build writes it; it is not in git). Change the Python models instead.",
        "",
    ]
    out += [f"export type {name} = {ts_type(value, {})};" for value, name in aliases.items()]
    for model in models():
        out += ["", *_interface(model, aliases)]
    names = {m.split("/", 1)[1]: m for m in methods.METHODS}
    commands = {c.split(".", 1)[1]: c for c in methods.COMMANDS}
    out += ["", *_consts("Methods", "The custom methods and notifications.", names)]
    out += [
        "",
        *_consts(
            "ServerCommands",
            "workspace/executeCommand commands of the server (also what its code lenses run).",
            commands,
        ),
    ]
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    target = Path(argv[0]) if argv else DEFAULT_OUT
    text = render()
    # Written only when it changes: the extension build hashes its sources.
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
