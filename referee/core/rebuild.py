"""The state rebuilt from the event log alone: the log is the source of truth (213).

The service opens a game from its last snapshot and the events after it; `replay`, `verify`
and `export-mail` rebuild the same state from the start. Pure: the engine and the codec only.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from referee.core import codec, engine
from referee.core.clock import utc
from referee.core.model import GameState


def rebuild(initial: GameState, events: Sequence[tuple[datetime, dict[str, Any]]]) -> GameState:
    """The state from the event log alone: the log is the source of truth (213)."""
    return rebuild_from(engine.start_game(initial, initial.started_at).state, events)


def rebuild_from(state: GameState, events: Sequence[tuple[datetime, dict[str, Any]]]) -> GameState:
    """A snapshot brought up to date with the events logged after it."""
    for at, payload in events:
        state = engine.decide(state, codec.event_from_data(payload), utc(at)).state
    return state
