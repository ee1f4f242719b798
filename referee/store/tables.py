"""The database tables: games, the append-only event log, inbound mail, the outbox (205, 213).

The event log is the source of truth; `games.state` is a snapshot that can be rebuilt from it.
Several games share one database, each row keyed by its game; `game_owners` says which `run`
process works each game, and `workers` which processes are alive to share them.
"""

from __future__ import annotations

import enum
from datetime import datetime

from sqlalchemy import Column, Index, LargeBinary, String, Text, UniqueConstraint
from sqlmodel import Field, SQLModel


class GameRow(SQLModel, table=True):
    __tablename__ = "games"

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(index=True, unique=True)  # the display name, `[game] name`
    key: str = Field(index=True, unique=True)  # the stable identity, `[game] id` (its key)
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
    REFUSED = "refused"  # refused whole: unreadable sender, limits, size, authentication
    IGNORED = "ignored"  # a bounce, an auto-reply, or the referee's own mail
    STRANGER = "stranger"  # from someone not playing
    QUARANTINED = "quarantined"  # could not be processed: kept aside, never lost
    DUPLICATE = "duplicate"  # already applied (a receipt's status; never written)


class OutboxStatus(enum.StrEnum):
    """Where an outgoing mail stands (the `outbox.status` column)."""

    PENDING = "pending"  # waiting for its (next) attempt
    SENDING = "sending"  # claimed by one process's postman
    SENT = "sent"
    FAILED = "failed"  # refused for good by the server


class InboundRow(SQLModel, table=True):
    """Every inbound mail, keyed by sender, Message-ID and body (see `parse.dedupe_key`).

    The Message-ID itself is kept as written, in a column with no index: any length and any
    characters fit on both databases, and no one can take a player's Message-ID ahead of him.
    """

    __tablename__ = "inbound"
    __table_args__ = (
        UniqueConstraint("game_id", "dedupe_key"),
        Index("ix_inbound_sender_day", "game_id", "sender", "received_at"),
        Index("ix_inbound_dedupe_key", "dedupe_key"),  # the same mail in another game (0007)
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    dedupe_key: str = Field(sa_column=Column(String(64), nullable=False))  # SHA-256, hex
    message_id: str = Field(sa_column=Column(Text, nullable=False))
    sender: str
    received_at: datetime  # when it took effect (a deadline due after it fired after it)
    # When it was delivered: earlier than `received_at` when it was read only after a later
    # event had been logged (it took effect at that event's time). None in the rows written
    # before it was kept (0008).
    delivered_at: datetime | None = None
    status: str  # processed | refused | ignored | stranger | quarantined
    note: str = ""
    commands: int = 0  # commands read from it, for the per-sender daily limit


class OutboxRow(SQLModel, table=True):
    __tablename__ = "outbox"

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    message_id: str = Field(index=True, unique=True)
    recipient: str
    kind: str
    created_at: datetime
    raw: bytes = Field(sa_column=Column(LargeBinary, nullable=False))
    status: str = Field(default="pending", index=True)  # pending | sending | sent | failed
    claimed_by: str | None = None  # the process sending it, while `sending`
    attempts: int = 0
    next_attempt_at: datetime | None = None
    sent_at: datetime | None = None
    last_error: str = ""


class ChainRow(SQLModel, table=True):
    """One link of the game's hash chain (213): what one inbound mail or deadline did.

    `raw` is the inbound message exactly as received (None for a deadline or the start);
    `record` is the canonical JSON the link binds: the previous head, the kind, the time it
    took effect, the raw message's SHA-256, the events it caused, the referee's version and
    the digest of the state after it; `head` is the SHA-256 of `record`, so changing,
    removing, reordering or inserting any one link changes every later head.
    """

    __tablename__ = "chain"
    __table_args__ = (UniqueConstraint("game_id", "seq"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    seq: int
    kind: str  # start | mail | tick
    at: datetime
    raw: bytes | None = Field(default=None, sa_column=Column(LargeBinary, nullable=True))
    record: str = Field(sa_column=Column(Text, nullable=False))
    head: str = Field(sa_column=Column(String(64), nullable=False))


class StrangerRow(SQLModel, table=True):
    __tablename__ = "strangers"
    __table_args__ = (UniqueConstraint("game_id", "address", "day"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    address: str
    day: str


class ConfirmationRow(SQLModel, table=True):
    """A request waiting for its address to confirm it by reply: to join, or to move (201).

    `address` is who must confirm (the stranger, or the player's new address); `old` is the
    player's address for a move. The token names the confirmation mail's thread.
    """

    __tablename__ = "confirmations"
    __table_args__ = (
        UniqueConstraint("game_id", "token"),
        Index("ix_confirmations_address", "game_id", "address"),
    )

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    token: str
    kind: str  # join | address
    address: str
    name: str = ""
    old: str = ""
    created_at: datetime
    day: str
    status: str = "pending"  # pending | confirmed


class MailboxRow(SQLModel, table=True):
    """The IMAP folder a game reads, with the UIDVALIDITY and the highest UID seen."""

    __tablename__ = "mailboxes"
    __table_args__ = (UniqueConstraint("game_id", "folder"),)

    id: int | None = Field(default=None, primary_key=True)
    game_id: int = Field(foreign_key="games.id", index=True)
    folder: str
    uidvalidity: int = 0
    last_uid: int = 0


class GameOwnerRow(SQLModel, table=True):
    """The lease on a game: the one process that works it, until `expires_at` unless renewed."""

    __tablename__ = "game_owners"

    game_id: int = Field(foreign_key="games.id", primary_key=True)
    owner: str
    expires_at: datetime


class WorkerRow(SQLModel, table=True):
    """A live `run` process, renewed by its heartbeat: the games are shared among these."""

    __tablename__ = "workers"

    name: str = Field(primary_key=True)
    expires_at: datetime
