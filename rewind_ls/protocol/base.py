"""What every wire shape shares: the literal vocabularies (scope, mode, status, ...) and the base
models (`Params`: unknown fields are an error; `Result`: camelCase aliases)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

Scope = Literal["code", "conversation", "both"]
# "version": one file back to one recorded version (local history; `version` names it).
Mode = Literal["rewind", "revert", "version"]
# A preview may also be of the undo (the latest restore point; no turnId needed).
PreviewMode = Literal["rewind", "revert", "undo", "version"]
ChangeKind = Literal["created", "modified", "deleted"]
Action = Literal["create", "modify", "delete", "unchanged"]
ConflictKind = Literal[
    "modified-outside",  # current content is not what rewind-ls last saw (person, other tool)
    "other-session",  # another session (or the person's saves) changed the path after the turn
    "merge",  # revert: the three-way merge does not apply cleanly
    "not-restorable",  # the content needed was too large to record, or is unknown
]
SessionKind = Literal["agent", "editor", "external", "rewind"]
RestoreStatus = Literal["applied", "nothing-to-do", "conflict", "partial", "failed", "planned"]
SummarizeDirection = Literal["from", "upTo"]


class Params(BaseModel):
    """Base of request params: camelCase aliases, unknown fields are an error."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class Result(BaseModel):
    """Base of results and notifications: camelCase aliases."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)
