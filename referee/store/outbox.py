"""The outbox's rows as the senders see them: claimed, marked sent or failed (205).

Outbox rows are written by a unit of work (`UnitOfWork.enqueue`); here they are read, and
claimed (`sending`, `claimed_by`) before they are sent, with `FOR UPDATE SKIP LOCKED` on
PostgreSQL; on SQLite the claim is one atomic UPDATE. A process that died mid-send leaves
rows `sending` that `unclaim` puts back.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import func, update
from sqlalchemy.engine import Engine
from sqlmodel import Session, SQLModel, col, select

from referee.store.tables import InboundRow, OutboxRow

_OUTBOX_T = SQLModel.metadata.tables[OutboxRow.__tablename__]
_OUTBOX = _OUTBOX_T.c


class OutboxBook:
    """The store's book of outgoing mail (a part of `Store`)."""

    engine: Engine

    def outbox(self, game_id: int | None = None, status: str | None = None) -> list[OutboxRow]:
        with Session(self.engine) as session:
            query = select(OutboxRow).order_by(col(OutboxRow.id))
            if game_id is not None:
                query = query.where(OutboxRow.game_id == game_id)
            if status is not None:
                query = query.where(OutboxRow.status == status)
            return list(session.exec(query).all())

    def outbox_mail(self, game_id: int) -> list[tuple[bytes, datetime]]:
        """The game's outgoing mail in the order it was queued: each one's bytes and the time
        it was queued (`outbox`'s rows without the rest of their columns, as `replay --out`
        writes them)."""
        with Session(self.engine) as session:
            query = (
                select(OutboxRow.raw, OutboxRow.created_at)
                .where(OutboxRow.game_id == game_id)
                .order_by(col(OutboxRow.id))
            )
            return [(raw, at) for raw, at in session.exec(query).all()]

    # ----- the outbox worker's side ---------------------------------------------------------

    def due(self, game_id: int, now: datetime, limit: int = 500) -> list[OutboxRow]:
        """Pending mail whose next attempt is due, oldest first."""
        with Session(self.engine) as session:
            query = (
                select(OutboxRow)
                .where(
                    OutboxRow.game_id == game_id,
                    OutboxRow.status == "pending",
                    col(OutboxRow.next_attempt_at) <= now,
                )
                .order_by(col(OutboxRow.id))
                .limit(limit)
            )
            return list(session.exec(query).all())

    def next_attempt(self, game_id: int) -> datetime | None:
        with Session(self.engine) as session:
            found = session.exec(
                select(func.min(OutboxRow.next_attempt_at)).where(
                    OutboxRow.game_id == game_id, OutboxRow.status == "pending"
                )
            ).one()
            return found if isinstance(found, datetime) else None

    def claim(self, game_id: int, owner: str, now: datetime, limit: int = 500) -> list[OutboxRow]:
        """Take due pending rows for sending (`sending`, claimed by `owner`), oldest first.

        A row is claimed by one process only: the subquery skips rows another transaction has
        locked (PostgreSQL), and the UPDATE takes only rows still `pending`.
        """
        due = (
            select(_OUTBOX.id)
            .where(
                _OUTBOX.game_id == game_id,
                _OUTBOX.status == "pending",
                _OUTBOX.next_attempt_at <= now,
            )
            .order_by(_OUTBOX.id)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        statement = (
            update(_OUTBOX_T)
            .where(_OUTBOX.id.in_(due.scalar_subquery()), _OUTBOX.status == "pending")
            .values(status="sending", claimed_by=owner)
            .returning(*_OUTBOX_T.c)
        )
        with Session(self.engine) as session:
            found = session.connection().execute(statement).mappings().all()
            session.commit()
        return sorted((OutboxRow(**dict(row)) for row in found), key=lambda r: r.id or 0)

    def unclaim(self, game_id: int) -> int:
        """Put back rows a previous owner claimed and never recorded (it died mid-send)."""
        with Session(self.engine) as session:
            result = session.connection().execute(
                update(_OUTBOX_T)
                .where(_OUTBOX.game_id == game_id, _OUTBOX.status == "sending")
                .values(status="pending", claimed_by=None)
            )
            session.commit()
            return int(result.rowcount)

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
        """Record a send: `sent`, `failed` for good (5xx), or `pending` again with a retry time.

        With `owner`, only while the row is still that process's claim.
        """
        where = [_OUTBOX.id == row_id]
        if owner is not None:
            where += [_OUTBOX.status == "sending", _OUTBOX.claimed_by == owner]
        with Session(self.engine) as session:
            session.execute(
                update(_OUTBOX_T)
                .where(*where)
                .values(
                    claimed_by=None,
                    status=status,
                    attempts=attempts,
                    sent_at=at if status == "sent" else None,
                    next_attempt_at=next_attempt,
                    last_error=error[:500],
                )
            )
            session.commit()

    def counts(self, game_id: int) -> dict[str, int]:
        """How many outbox rows are in each status, and how many mails were quarantined."""
        with Session(self.engine) as session:
            rows = session.exec(
                select(OutboxRow.status, func.count())
                .where(OutboxRow.game_id == game_id)
                .group_by(OutboxRow.status)
            ).all()
            out = {str(status): int(n) for status, n in rows}
            out["quarantined"] = int(
                session.exec(
                    select(func.count())
                    .select_from(InboundRow)
                    .where(InboundRow.game_id == game_id, InboundRow.status == "quarantined")
                ).one()
            )
            return out

    def oldest_waiting(self, game_id: int) -> datetime | None:
        """When the oldest mail not yet sent (pending or being sent) was queued."""
        with Session(self.engine) as session:
            oldest = session.exec(
                select(func.min(OutboxRow.created_at)).where(
                    OutboxRow.game_id == game_id,
                    OutboxRow.status.in_(("pending", "sending")),  # type: ignore[attr-defined]
                )
            ).one()
            return oldest if isinstance(oldest, datetime) else None
