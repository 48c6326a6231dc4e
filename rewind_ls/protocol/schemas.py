"""Generate `schemas/*.json` from the protocol models: `python -m rewind_ls.protocol.schemas --write`.
`--check` exits 1 when the files on disk differ from the models (the tests run it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rewind_ls.protocol.methods import METHODS

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schemas"


def _file_stem(method: str) -> str:
    return method.replace("/", ".")


def render() -> dict[str, str]:
    """File name -> JSON text, for every method's params and result."""
    out: dict[str, str] = {}
    for method, (params, result) in METHODS.items():
        kinds = [("params", params)] + ([("result", result)] if result is not None else [])
        for kind, model in kinds:
            schema = model.model_json_schema(
                by_alias=True, mode="validation" if kind == "params" else "serialization"
            )
            schema = {
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "title": f"{method} {kind}",
                **schema,
            }
            out[f"{_file_stem(method)}.{kind}.json"] = (
                json.dumps(schema, indent=2, sort_keys=True) + "\n"
            )
    return out


def main(argv: list[str]) -> int:
    files = render()
    if "--write" in argv:
        SCHEMA_DIR.mkdir(exist_ok=True)
        for stale in SCHEMA_DIR.glob("rewind.*.json"):
            if stale.name not in files:
                stale.unlink()
        for name, text in files.items():
            (SCHEMA_DIR / name).write_text(text, encoding="utf-8")
        print(f"wrote {len(files)} schemas to {SCHEMA_DIR}")
        return 0
    drift = [
        name
        for name, text in files.items()
        if not (SCHEMA_DIR / name).exists()
        or (SCHEMA_DIR / name).read_text(encoding="utf-8") != text
    ]
    extra = [p.name for p in SCHEMA_DIR.glob("rewind.*.json") if p.name not in files]
    if drift or extra:
        print("schemas differ from the models: " + ", ".join(drift + extra))
        print("run: python -m rewind_ls.protocol.schemas --write")
        return 1
    print(f"{len(files)} schemas match the models")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
