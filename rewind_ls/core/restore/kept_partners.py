"""A rewind's shared change whose partner turn the rewind keeps: a conflict.

A change recorded as shared (`model.SHARED_SOURCE`) could be any of its turns'. Across sessions
`plan._check_others` finds it. Within one session it is a background job's write, credited to the
earlier turn that started the job, made while a later turn's own shell command ran
(`core.capture.background_shell`): rewinding the later turn would put the file back to what it held
before that turn and cut what the job wrote meanwhile, which stays in the earlier turn.
"""

from __future__ import annotations

from rewind_ls.core.model import PathChange, Turn, TurnState, shared_turns
from rewind_ls.core.store import Store


def kept_partner(store: Store, path: str, turn: Turn, history: list[PathChange]) -> str | None:
    """Why rewinding `turn`'s session from `turn` on over `path` (`history`: its changes from
    `turn` on) is a conflict: one of them is shared with an earlier turn of the session. None
    when none is."""
    for h in reversed(history):
        if h.session_id != turn.session_id or h.turn_state == TurnState.ROLLED_BACK:
            continue
        for partner_id in shared_turns(h.source):
            partner = store.turn(partner_id)
            if (
                partner is not None
                and partner.session_id == turn.session_id
                and partner.seq < turn.seq
            ):
                return (
                    f"{path}: shared with turn #{partner.number} of this session (its "
                    "background job wrote it while a later turn's command ran), which this "
                    "rewind keeps; restoring could discard the job's work"
                )
    return None
