"""What the units of a replay's batch know of the store without reading it back (205).

See `Store.batch`: a replay's thousands of units share one transaction, and only they write
the store meanwhile, so what they wrote need not be read again.
"""

from __future__ import annotations

from datetime import date

from referee.core.model import GameState


class BatchMemory:
    """What the units of a batch (`Store.batch`) know of the store without reading it, since
    only they write it meanwhile: every inbound mail's key and status, each sender's mail
    on a day, the games the database holds; and each game's row as the units left it, to
    write once when the batch ends (its event count, and its latest state snapshot, kept as
    the frozen state itself until then).

    A unit that fails is undone in the database: `undo` then forgets what was read (it is
    read again when asked) and puts the games' rows back as that unit found them."""

    def __init__(self) -> None:
        self.keys: dict[int, dict[str, str]] = {}  # game -> dedupe key -> status
        self.days: dict[tuple[int, str, date], list[int]] = {}  # see `UnitOfWork.sender_today`
        self.games: set[int] | None = None  # the games' ids, once read
        # game -> (its event count, its latest snapshot and the last event it includes, or
        # None when the batch has taken none)
        self.games_rows: dict[int, tuple[int, GameState | None, int | None]] = {}

    def forget(self) -> None:
        """Everything read is read again (rows were written or undone outside the units)."""
        self.keys.clear()
        self.days.clear()
        self.games = None

    def undo(self, rows: dict[int, tuple[int, GameState | None, int | None]]) -> None:
        self.forget()
        self.games_rows = rows
