"""The database tables: games, the append-only event log, inbound mail, the outbox (205, 213).

The event log is the source of truth; `games.state` is a snapshot that can be rebuilt from it.
Several games share one database, each row keyed by its game.
"""

from __future__ import annotations

import enum
from datetime import datetime

from sqlalchemy import Column, LargeBinary, Text, UniqueConstraint
from sqlmodel import Field, SQLModel


class GameRow(SQLModel, table=True):
    __tablename__ = "games"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(index=True, unique=True)
    address: str
    language: str
    created_at: datetime
    initial_state: str = Field(sa_column=Column(Text, nullable=False))
    state: str = Field(sa_column=Column(Text, nullable=False))  # a snapshot, at `snapshot_seq`
    snapshot_seq: int = 0  # the last event folded into `state`; later events are replayed on load
    events: int = 0


class EventRow(SQLModel, table=True):
    __tablename__ = "events"
    __table_args__ = (UniqueConstraint("game_id", "seq"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    seq: int
    at: datetime
    message_id: str | None = None
    payload: str = Field(sa_column=Column(Text, nullable=False))


class InboundStatus(enum.StrEnum):
    """What became of an inbound mail (the `inbound.status` column)."""

    PROCESSED = "processed"  # a player's mail: its commands were obeyed or refused
    REFUSED = "refused"  # a player's mail refused whole: too large, or not authenticated
    IGNORED = "ignored"  # a bounce, an auto-reply, or the referee's own mail
    STRANGER = "stranger"  # from someone not playing
    QUARANTINED = "quarantined"  # could not be processed: kept aside, never lost
    DUPLICATE = "duplicate"  # already applied (a receipt's status; never written)


class OutboxStatus(enum.StrEnum):
    """Where an outgoing mail stands (the `outbox.status` column)."""

    PENDING = "pending"  # waiting for its (next) attempt
    SENT = "sent"
    FAILED = "failed"  # refused for good by the server


class InboundRow(SQLModel, table=True):
    __tablename__ = "inbound"
    __table_args__ = (UniqueConstraint("game_id", "message_id"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    message_id: str
    sender: str
    received_at: datetime
    status: str  # an InboundStatus
    note: str = ""


class OutboxRow(SQLModel, table=True):
    __tablename__ = "outbox"

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    message_id: str = Field(index=True, unique=True)
    recipient: str
    kind: str
    created_at: datetime
    raw: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    status: str = Field(default=OutboxStatus.PENDING.value, index=True)  # an OutboxStatus
    attempts: int = 0
    next_attempt_at: datetime | None = None
    sent_at: datetime | None = None
    last_error: str = ""


class StrangerRow(SQLModel, table=True):
    __tablename__ = "strangers"
    __table_args__ = (UniqueConstraint("game_id", "address", "day"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    address: str
    day: str


class MailboxRow(SQLModel, table=True):
    """The IMAP folder a game reads, with the UIDVALIDITY and the highest UID seen."""

    __tablename__ = "mailboxes"
    __table_args__ = (UniqueConstraint("game_id", "folder"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    folder: str
    uidvalidity: int = 0
    last_uid: int = 0
