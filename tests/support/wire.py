"""Strict checks of what travels on the wire against the protocol models: every key a field of the
shape (camelCase), every field of the shape present, the values valid."""

from __future__ import annotations

from typing import Any, get_args

from pydantic import BaseModel

from rewind_ls.protocol.methods import METHODS


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model inside `annotation` (Model, list[Model], Model | None), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _keys(model: type[BaseModel], data: Any, where: str, every_field: bool) -> None:
    assert isinstance(data, dict), f"{where}: {model.__name__} must be an object, got {data!r}"
    fields = {f.alias or name: f for name, f in model.model_fields.items()}
    unknown = set(data) - set(fields)
    assert not unknown, f"{where}: {sorted(unknown)} not fields of {model.__name__}"
    if every_field:
        missing = set(fields) - set(data)
        assert not missing, f"{where}: {model.__name__} lacks {sorted(missing)}"
    for key, value in data.items():
        inner = _model_in(fields[key].annotation)
        if inner is None or value is None:
            continue
        for i, item in enumerate(value if isinstance(value, list) else [value]):
            _keys(inner, item, f"{where}.{key}[{i}]", every_field)


def check_shape(
    model: type[BaseModel], data: Any, where: str = "", every_field: bool = True
) -> None:
    """`data` is exactly a `model` on the wire. `every_field=False` for the CLI's --json, which
    prints only the keys core gave (no defaults added)."""
    model.model_validate(data)
    _keys(model, data, where or model.__name__, every_field)


def check_response(method: str, result: Any) -> None:
    """A `rewind/*` response checked against the result model METHODS names for `method`."""
    model = METHODS[method][1]
    assert model is not None, f"{method} is a notification"
    check_shape(model, result, method)
