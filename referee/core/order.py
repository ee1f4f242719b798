"""Turn order: players in alphabetical order of surname, the King included (rule 201)."""

from __future__ import annotations

import unicodedata

from referee.core.model import GameState, Player


def collation_key(text: str) -> str:
    """Accents, case, spaces and apostrophes ignored first, as an Italian or English index does."""
    decomposed = unicodedata.normalize("NFKD", text)
    base = "".join(c for c in decomposed if not unicodedata.combining(c))
    return "".join(c for c in base.casefold() if c.isalnum())


def player_key(player: Player) -> tuple[str, str, str]:
    return (collation_key(player.surname), collation_key(player.name), player.email)


def turn_order(state: GameState) -> tuple[Player, ...]:
    """Active players in the order they take turns (201)."""
    return tuple(sorted(state.active_players, key=player_key))


def rotation(state: GameState) -> tuple[Player, ...]:
    """The players who take turns in the round in progress: a newcomer waits for the next (201)."""
    return tuple(p for p in turn_order(state) if p.first_round <= state.rounds_completed)
