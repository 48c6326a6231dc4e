"""The docs' reference pages, generated at build time from the code (never committed): the
command line from its argument parser, the environment variables from
`rewind_ls.core.fs.environment`, the exit codes from `rewind_ls.core.errors.EXIT_CODES`, the
`rewind/*` protocol from the JSON Schemas in `schemas/`. `hooks.py` (the mkdocs hook) adds them
to the site; `python scripts/docs/reference.py OUT_DIR` writes them as files to look at."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SCHEMAS = REPO / "schemas"

GENERATED_NOTE = (
    "!!! note\n    This page is generated when the site is built, from {source}: it describes "
    "the code it was built with.\n\n"
)


def _cell(text: str) -> str:
    """Text for a Markdown table cell: one line, no column break."""
    return " ".join(text.split()).replace("|", "\\|")


# --- the command line ----------------------------------------------------------------------------


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    """A parser's subcommands in the order its help lists them."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices.items())
    return []


def _command_sections(parser: argparse.ArgumentParser, path: list[str], level: int) -> list[str]:
    out = []
    name = " ".join(path)
    out.append(f"{'#' * level} `{name}`\n")
    if parser.description:
        out.append(parser.description.split("\n\n")[0].strip() + "\n")
    # The epilog (TURN, the store, exit codes) is the same for every command: shown once, above.
    saved, parser.epilog = parser.epilog, None
    try:
        text = parser.format_help()
    finally:
        parser.epilog = saved
    out.append("```text\n" + text.rstrip() + "\n```\n")
    for sub_name, sub in _subcommands(parser):
        out.extend(_command_sections(sub, [*path, sub_name], min(level + 1, 4)))
    return out


def cli_reference() -> str:
    """Every command's `--help`, as the installed parser prints it."""
    import os

    from rewind_ls.cli.app import build_parser
    from rewind_ls.cli.common import EPILOG

    os.environ["COLUMNS"] = "100"  # argparse wraps at the terminal's width: the same on any machine
    parser = build_parser()
    parser.prog = "rewind-ls"
    out = [
        "# Command line\n",
        GENERATED_NOTE.format(source="the argument parser (`rewind_ls/cli/app.py`)"),
        "Every command, its arguments and options, as `rewind-ls COMMAND --help` prints them.\n",
        "```text\n" + EPILOG + "\n```\n",
    ]
    saved, parser.epilog = parser.epilog, None
    out.append("## `rewind-ls`\n")
    out.append("```text\n" + parser.format_help().rstrip() + "\n```\n")
    parser.epilog = saved
    for name, sub in _subcommands(parser):
        out.extend(_command_sections(sub, ["rewind-ls", name], 2))
    return "\n".join(out)


def command_names() -> dict[str, set[str]]:
    """Each command's subcommands ({} for a command without): what a docs example may name."""
    from rewind_ls.cli.app import build_parser

    return {name: {n for n, _ in _subcommands(sub)} for name, sub in _subcommands(build_parser())}


# --- environment variables and exit codes --------------------------------------------------------

_GROUPS = {
    "settings": ("Settings", "What you may set to change how rewind-ls works."),
    "agents": (
        "Set by the agents or the system",
        "Read by rewind-ls; you rarely set them yourself.",
    ),
    "tests": ("Checks and tests", "Set by `doctor` or the test suite; never needed in use."),
}


def environment_reference() -> str:
    from rewind_ls.core.fs.environment import ENVIRONMENT

    out = [
        "# Environment variables\n",
        GENERATED_NOTE.format(source="`rewind_ls/core/fs/environment.py`"),
        "A size, day or time limit set to something that is not a positive number is not used: "
        "the default is, and every command says so on stderr (`rewind-ls: warning: "
        "REWIND_LS_RETENTION_DAYS='-1' is not a positive number; the default 30 is used`), as "
        "`doctor` does with a FAIL row. A `.rewindignore` file (gitignore syntax) at the "
        "workspace root adds ignore rules for the scan.\n",
    ]
    for group, (title, blurb) in _GROUPS.items():
        out.append(f"## {title}\n\n{blurb}\n")
        out.append("| variable | default | meaning |\n| --- | --- | --- |")
        for var in ENVIRONMENT:
            if var.group == group:
                out.append(f"| `{var.name}` | {_cell(var.default)} | {_cell(var.meaning)} |")
        out.append("")
    return "\n".join(out)


def exit_codes_reference() -> str:
    from rewind_ls.core.errors import EXIT_CODES

    out = [
        "# Exit codes\n",
        GENERATED_NOTE.format(source="`rewind_ls/core/errors.py` (`EXIT_CODES`)"),
        "What every `rewind-ls` command returns. The hook command (`rewind-ls hook AGENT`, and "
        "the command `install` writes) always exits 0: a failure to record never blocks the "
        "agent; the reason goes to stderr and to `$REWIND_LS_HOME/rewind-ls.log`.\n",
        "| code | word | meaning |\n| --- | --- | --- |",
    ]
    for code, (word, meaning) in EXIT_CODES.items():
        out.append(f"| {code} | {word} | {_cell(meaning)} |")
    return "\n".join(out) + "\n"


# --- the rewind/* protocol -----------------------------------------------------------------------


def _type(schema: dict[str, Any]) -> str:
    """A schema's type in a few words: `string`, `Turn[]`, `"code" | "both"`, `X | null`."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[`{name}`](#{name.lower()})"
    if "anyOf" in schema:
        return " or ".join(_type(s) for s in schema["anyOf"])
    if "enum" in schema:
        return " or ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    kind = schema.get("type", "any")
    if kind == "array":
        return f"array of {_type(schema.get('items', {}))}"
    if kind == "object" and "additionalProperties" in schema and schema["additionalProperties"]:
        extra = schema["additionalProperties"]
        return f"object of {_type(extra) if isinstance(extra, dict) else 'any'}"
    return f"`{kind}`" if isinstance(kind, str) else " or ".join(f"`{k}`" for k in kind)


def _fields(schema: dict[str, Any]) -> list[str]:
    props: dict[str, Any] = schema.get("properties", {})
    if not props:
        return ["No fields.\n"]
    required = set(schema.get("required", []))
    rows = ["| field | type | required | meaning |", "| --- | --- | --- | --- |"]
    for name, prop in props.items():
        meaning = prop.get("description", "")
        if "default" in prop and name not in required:
            meaning = f"{meaning} (default `{json.dumps(prop['default'])}`)".strip()
        rows.append(
            f"| `{name}` | {_type(prop)} | {'yes' if name in required else ''} | {_cell(meaning)} |"
        )
    return [*rows, ""]


def protocol_reference(schemas: Path = SCHEMAS) -> str:
    """Each `rewind/*` method's params and result, and the types they use, from `schemas/`."""
    methods: dict[str, dict[str, dict[str, Any]]] = {}
    for path in sorted(schemas.glob("rewind.*.json")):
        _, method, side, _ = path.name.split(".")
        methods.setdefault(method, {})[side] = json.loads(path.read_text())
    out = [
        "# Protocol: the rewind/* messages\n",
        GENERATED_NOTE.format(
            source="the JSON Schemas in `schemas/` (themselves generated from "
            "`rewind_ls/protocol/`, and checked by `tests/test_protocol.py`)"
        ),
        "Names are camelCase on the wire; params reject unknown fields. What a client can rely "
        "on, and the standard LSP part: [the client contract](../client-contract.md).\n",
    ]
    defs: dict[str, dict[str, Any]] = {}
    for method, sides in methods.items():
        direction = "notification, server to client" if "result" not in sides else "request"
        out.append(f"## `rewind/{method}`\n\n{direction.capitalize()}.\n")
        for side in ("params", "result"):
            if side not in sides:
                continue
            schema = sides[side]
            defs.update(schema.get("$defs", {}))
            out.append(f"**{side.capitalize()}** (`{schema.get('title', side)}`)\n")
            if schema.get("description"):
                out.append(_cell(schema["description"]) + "\n")
            out.extend(_fields(schema))
    out.append("## Types\n")
    for name in sorted(defs):
        schema = defs[name]
        out.append(f"### {name}\n")
        if schema.get("description"):
            out.append(_cell(schema["description"]) + "\n")
        if "enum" in schema:
            out.append("One of " + _type(schema) + ".\n")
        else:
            out.extend(_fields(schema))
    return "\n".join(out)


# The generated pages: their path under docs/ and how each is made.
PAGES = {
    "reference/cli.md": cli_reference,
    "reference/environment.md": environment_reference,
    "reference/exit-codes.md": exit_codes_reference,
    "reference/protocol.md": protocol_reference,
}


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else REPO / "build" / "docs-reference"
    for rel, make in PAGES.items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(make())
        print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
