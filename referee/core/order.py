"""Turn order: players in alphabetical order of surname, the King included (rule 201)."""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from referee.core.model import GameState, Player


@lru_cache(maxsize=4096)
def collation_key(text: str) -> str:
    """Accents, case, spaces and apostrophes ignored first, as an Italian or English index does.
    Kept for the names last asked about: a game asks about the same few names over and over."""
    decomposed = unicodedata.normalize("NFKD", text)
    base = "".join(c for c in decomposed if not unicodedata.combining(c))
    return "".join(c for c in base.casefold() if c.isalnum())


def player_key(player: Player) -> tuple[str, str, str]:
    return (collation_key(player.surname), collation_key(player.name), player.email)


# The last roster ordered and its order: the roster is the same tuple until a player changes
_last: list[tuple[tuple[Player, ...], tuple[Player, ...]]] = []


def turn_order(state: GameState) -> tuple[Player, ...]:
    """Active players in the order they take turns (201)."""
    players = state.players
    if _last and _last[0][0] is players:
        return _last[0][1]
    order = tuple(sorted(state.active_players, key=player_key))
    _last[:] = [(players, order)]
    return order


def rotation(state: GameState) -> tuple[Player, ...]:
    """The players who take turns in the round in progress: a newcomer waits for the next (201)."""
    return tuple(p for p in turn_order(state) if p.first_round <= state.rounds_completed)
