"""`nomic-referee status --check`: is the running game healthy? For cron and monitors (205).

It exits non-zero, one line per problem, when mail waits too long in the outbox (the SMTP
server refuses or is down), when mail was set aside in quarantine in the last
`--quarantine-days` (1; 0: whenever any is there) or is undeliverable (an operator must look),
or when no `run` process has held the game for too long (so no one reads the inbox;
`--unread-minutes 0` turns that one off for `run --once` from cron). Mail set aside before
that window has been reported already: it is named on the OK line and no longer fails, so
one unreadable mail does not fail the check forever (new-user review).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol


@dataclass(frozen=True)
class Health:
    problems: tuple[str, ...]
    oldest_waiting: timedelta | None  # the age of the oldest mail not yet sent
    lease_age: timedelta | None  # how long since a `run` process last held the game
    reported: int = 0  # mail set aside before the window: reported already, not a problem now


class Watched(Protocol):
    """What the check reads of the store (`Store` is one): the outbox's rows by status, the
    oldest mail not yet sent, the mail set aside in quarantine, and the game's lease."""

    def counts(self, game_id: int) -> dict[str, int]: ...

    def oldest_waiting(self, game_id: int) -> datetime | None: ...

    def set_aside(self, game_id: int) -> list[tuple[datetime, str]]: ...

    def lease_expires(self, game_id: int) -> datetime | None: ...


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def check(
    store: Watched,
    game_id: int,
    now: datetime,
    stuck: timedelta,
    unread: timedelta,
    quarantine: timedelta | None = None,
) -> Health:
    """The game's problems at `now`; mail set aside in quarantine counts as one only when it
    was set aside within `quarantine` of `now` (None: whenever it was)."""
    counts = store.counts(game_id)
    set_aside = [(_aware(at), note) for at, note in store.set_aside(game_id)]
    oldest = store.oldest_waiting(game_id)
    expires = store.lease_expires(game_id)
    problems = []
    waiting = now - _aware(oldest) if isinstance(oldest, datetime) else None
    if waiting is not None and waiting > stuck:
        problems.append(
            f"outbox stuck: the oldest waiting mail is {_minutes(waiting)} old "
            f"({counts.get('pending', 0) + counts.get('sending', 0)} waiting); see "
            "`nomic-referee outbox CONFIG --status waiting` and the log's SMTP errors"
        )
    recent = [note for at, note in set_aside if quarantine is None or now - at <= quarantine]
    if recent:
        unreadable = sum(1 for note in recent if note.startswith("Unreadable"))
        told = f" ({unreadable} unreadable, the sender told)" if unreadable else ""
        within = f" in the last {_days(quarantine)}" if quarantine is not None else ""
        problems.append(
            f"{len(recent)} mail(s) set aside in quarantine{within}{told}: read the log; "
            "fix and move back to the inbox what should be read again. Once seen, the check "
            "passes when they are older than --quarantine-days"
        )
    if counts.get("failed", 0):
        problems.append(
            f"{counts['failed']} mail(s) undeliverable: `nomic-referee outbox CONFIG --status "
            "undeliverable`"
        )
    held = now - _aware(expires) if expires is not None else None
    if not unread:
        pass  # `run --once` from cron holds no lease between runs: the operator said so
    elif expires is None:
        problems.append(
            "no `run` process works this game: the inbox is not read (with `run --once` "
            "from cron, give --unread-minutes 0)"
        )
    elif held is not None and held > unread:
        problems.append(
            f"the inbox has not been read for {_minutes(held)}: no `run` process holds the game"
        )
    return Health(tuple(problems), waiting, held, len(set_aside) - len(recent))


def _days(span: timedelta) -> str:
    days = span.total_seconds() / 86400
    return f"{days:g} day" + ("" if days == 1 else "s")


def _minutes(span: timedelta) -> str:
    minutes = int(span.total_seconds() // 60)
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"
