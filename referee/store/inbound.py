"""Inbound mail as the store keeps it: its rows, its quarantine, the mailboxes read (205, 213).

The store never reads a mail: it takes the fields that name one (`InboundKeys`: its sender,
Message-ID and dedupe keys), so it knows nothing of how mail is parsed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from sqlalchemy import func
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from referee.store.memory import BatchMemory
from referee.store.tables import InboundRow, MailboxRow


class InboundKeys(Protocol):
    """What names an inbound mail for the store: who sent it, its Message-ID, the key it is
    recorded under, and every key an older version of the referee may have recorded it under
    (its own first)."""

    @property
    def sender(self) -> str: ...

    @property
    def message_id(self) -> str: ...

    @property
    def dedupe_key(self) -> str: ...

    @property
    def dedupe_keys(self) -> tuple[str, ...]: ...


class InboundBook:
    """The store's book of inbound rows and mailboxes (a part of `Store`)."""

    engine: Engine
    _kept: BatchMemory | None

    def mailbox(self, game_id: int, folder: str) -> tuple[int, int]:
        """The UIDVALIDITY and last UID recorded for a folder (0, 0 when new)."""
        with Session(self.engine) as session:
            row = session.exec(
                select(MailboxRow).where(MailboxRow.game_id == game_id, MailboxRow.folder == folder)
            ).first()
            return (row.uidvalidity, row.last_uid) if row else (0, 0)

    def save_mailbox(self, game_id: int, folder: str, uidvalidity: int, last_uid: int) -> None:
        with Session(self.engine) as session:
            row = session.exec(
                select(MailboxRow).where(MailboxRow.game_id == game_id, MailboxRow.folder == folder)
            ).first()
            row = row or MailboxRow(game_id=game_id, folder=folder)
            row.uidvalidity, row.last_uid = uidvalidity, last_uid
            session.add(row)
            session.commit()

    def record_failure(
        self,
        game_id: int,
        message_id: str,
        sender: str,
        at: datetime,
        error: str,
        key: str,
    ) -> None:
        """A message that made processing fail: kept in the quarantine folder, noted here
        under `key`, its dedupe key (`InboundKeys.dedupe_key`, or one of its sender and
        Message-ID alone when its body could not be read)."""
        if self._kept is not None:
            self._kept.forget()
        with Session(self.engine) as session:
            exists = session.exec(
                select(InboundRow).where(
                    InboundRow.game_id == game_id, InboundRow.dedupe_key == key
                )
            ).first()
            if exists is None:
                session.add(
                    InboundRow(
                        game_id=game_id,
                        dedupe_key=key,
                        message_id=message_id,
                        sender=sender,
                        received_at=at,
                        delivered_at=at,
                        status="quarantined",
                        note=error[:500],
                    )
                )
                session.commit()

    def inbound_count(self, game_id: int) -> int:
        with Session(self.engine) as session:
            count = session.exec(
                select(func.count()).select_from(InboundRow).where(InboundRow.game_id == game_id)
            ).one()
            return int(count)

    def inbound_rows(self, game_id: int) -> list[tuple[str, str, str, datetime, int]]:
        """Every inbound mail's dedupe key, sender, status, time of effect and count of
        commands, in the order they were recorded (`verify` compares them, 213)."""
        with Session(self.engine) as session:
            rows = session.exec(
                select(InboundRow).where(InboundRow.game_id == game_id).order_by(col(InboundRow.id))
            ).all()
            return [(r.dedupe_key, r.sender, r.status, r.received_at, r.commands) for r in rows]

    def set_aside(self, game_id: int) -> list[tuple[datetime, str]]:
        """Each mail set aside in quarantine: when, and why (its note)."""
        with Session(self.engine) as session:
            rows = session.exec(
                select(InboundRow.received_at, InboundRow.note).where(
                    InboundRow.game_id == game_id, InboundRow.status == "quarantined"
                )
            ).all()
            return [(at, note) for at, note in rows]
