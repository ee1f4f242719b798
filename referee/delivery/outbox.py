"""The outbox as its senders see it, and what they share (205: the referee's mail goes out).

A postman takes the game's due rows (`Outbox.claim`), hands each to its way out (an SMTP
server, or the `sent` Maildir without one) and records what became of it
(`Outbox.mark_outbox`): sent, refused for good, or pending again with a retry time. Those
two are all a postman asks of the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from referee.store.tables import OutboxRow

BACKOFF_FIRST = 30.0  # seconds before the first retry
BACKOFF_MAX = 3600.0  # never wait longer than an hour between tries
CLAIM_BATCH = 50  # rows one process claims at a time: few in hand if its lease is lost unseen


def backoff(attempts: int, first: float = BACKOFF_FIRST) -> timedelta:
    return timedelta(seconds=min(BACKOFF_MAX, first * 2 ** max(0, attempts - 1)))


class Outbox(Protocol):
    """The two things a postman asks of the store (`Store` is one)."""

    def claim(self, game_id: int, owner: str, now: datetime, limit: int = 500) -> list[OutboxRow]:
        """Take due pending rows for sending, oldest first."""
        ...

    def mark_outbox(
        self,
        row_id: int,
        status: str,
        attempts: int,
        at: datetime,
        next_attempt: datetime | None = None,
        error: str = "",
        owner: str | None = None,
    ) -> None:
        """Record a send: sent, failed for good, or pending again with a retry time."""
        ...


@dataclass
class Tally:
    sent: int = 0
    deferred: int = 0
    failed: int = 0
