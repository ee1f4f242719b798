"""The store: one transaction per processed mail or tick, SQLite or PostgreSQL (205, 213).

A unit of work writes the inbound record, the events, the new state snapshot and the outbox
rows together, so a crash leaves either all of them or none.

Any number of `run` processes may share one database; each game is worked by one of them at a
time. A process holds a game by a lease row (`game_owners`) that it renews by heartbeat; once
`fence` is set, every unit of work first renews that lease in its own transaction and fails with
`LostGame` when another process has taken the game over, so two processes can never both write
a game's events. Outbox rows are claimed (`sending`, `claimed_by`) before they are sent, with
`FOR UPDATE SKIP LOCKED` on PostgreSQL; on SQLite the claim is one atomic UPDATE.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

from alembic import command as alembic_command
from alembic.config import Config as AlembicConfig
from sqlalchemy import and_, bindparam, case, delete, func, insert, inspect, or_, text, update
from sqlalchemy import event as sa_event
from sqlalchemy import select as columns
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.pool import StaticPool
from sqlmodel import Session, SQLModel, col, create_engine, select
from sqlmodel.sql.sqltypes import UTCDateTime

from referee.core import codec
from referee.core.chain import CHAIN_HEADER, CHAIN_PENDING, GENESIS
from referee.core.codec import state_from_data
from referee.core.model import GameState
from referee.mail.parse import InboundMail, dedupe_key
from referee.store.tables import (
    ChainRow,
    ConfirmationRow,
    EventRow,
    GameOwnerRow,
    GameRow,
    InboundRow,
    MailboxRow,
    OutboxRow,
    StrangerRow,
    WorkerRow,
)

SNAPSHOT_EVERY = 100  # events between state snapshots
MIGRATIONS = Path(__file__).resolve().parent / "migrations"


class StoreError(RuntimeError):
    """The store cannot do what was asked (no such game, game exists already)."""


class LostGame(StoreError):
    """Another process works this game now: this one must stop writing it."""


class DatabaseDown(StoreError):
    """The database cannot be written or reached: the service stops rather than lose mail."""


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        memory = url in ("sqlite://", "sqlite:///:memory:")
        engine = create_engine(
            url,
            connect_args={"check_same_thread": False},
            poolclass=StaticPool if memory else None,
        )

        @sa_event.listens_for(engine, "connect")
        def _pragmas(connection: Any, _record: Any) -> None:
            if memory:  # SQLAlchemy's recipe for real SAVEPOINTs on pysqlite (see `batch`)
                connection.isolation_level = None
            cursor = connection.cursor()
            if not memory:
                cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=10000")
            cursor.close()

        if memory:

            @sa_event.listens_for(engine, "begin")
            def _begin(connection: Any) -> None:
                connection.exec_driver_sql("BEGIN")

        return engine
    # Times are stored as UTC; the session's time zone must not shift them.
    return create_engine(url, pool_pre_ping=True, connect_args={"options": "-c timezone=UTC"})


def dump_state(state: GameState) -> str:
    """The snapshot's JSON (`codec.state_json`: the text of unchanged members reused)."""
    return codec.state_json(state)


def load_state(text: str) -> GameState:
    return state_from_data(json.loads(text))


class Store:
    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self.fences: dict[int, tuple[str, float]] = {}  # game -> (owner, lease seconds)
        self.memory = url in ("sqlite://", "sqlite:///:memory:")
        self._batch: Session | None = None  # see `batch`
        self._batch_connection: Connection | None = None  # its connection, taken once
        self._known: dict[int, tuple[int | None, int | None]] = {}  # see `unit`
        self._open = 0  # units of the batch open now
        self._inner = False  # a unit was opened inside the one open now
        self._kept: _Batch | None = None  # what a batch's units know without reading it

    def create_schema(self) -> None:
        """Bring the tables up to date with the migrations (alembic upgrade head).

        A throw-away store in memory (a replay's) gets the same tables straight from the
        models: the migrations are tested to give exactly these (tests/test_service.py).
        """
        if self.memory:
            SQLModel.metadata.create_all(self.engine)
            return
        config = AlembicConfig()
        config.set_main_option("script_location", str(MIGRATIONS))
        with self.engine.begin() as connection:
            if connection.dialect.name == "postgresql":  # processes starting together: one migrates
                connection.execute(text("SELECT pg_advisory_xact_lock(20261130)"))
            config.attributes["connection"] = connection
            alembic_command.upgrade(config, "head")

    def close(self) -> None:
        self.engine.dispose()

    def has_schema(self) -> bool:
        return inspect(self.engine).has_table("games")

    def pending_migrations(self) -> list[str]:
        """The migrations this version has that the database has not had yet, oldest first."""
        from alembic.runtime.migration import MigrationContext
        from alembic.script import ScriptDirectory

        config = AlembicConfig()
        config.set_main_option("script_location", str(MIGRATIONS))
        script = ScriptDirectory.from_config(config)
        with self.engine.connect() as connection:
            current = MigrationContext.configure(connection).get_current_heads()
        wanted = script.get_current_head()
        pending = [
            revision.revision
            for revision in script.iterate_revisions(wanted, current[0] if current else None)
        ]
        return list(reversed(pending))

    def game_id(self, key: str) -> int | None:
        """The game whose stable key (`[game] id`) is `key`, if the database holds it."""
        if not self.has_schema():
            return None
        with Session(self.engine) as session:
            row = session.exec(select(GameRow).where(GameRow.key == key)).first()
            return row.id if row else None

    def games(self) -> list[tuple[str, str]]:
        """Every game in the database: (key, display name), by key."""
        if not self.has_schema():
            return []
        with Session(self.engine) as session:
            rows = session.exec(select(GameRow).order_by(col(GameRow.key))).all()
            return [(r.key, r.name) for r in rows]

    def rename_game(self, game_id: int, name: str) -> None:
        """A new display name (a typo fixed in `[game] name`); the key stays."""
        with Session(self.engine) as session:
            session.execute(update(GameRow).where(col(GameRow.id) == game_id).values(name=name))
            session.commit()

    def create_game(
        self, key: str, name: str, address: str, language: str, initial: GameState, at: datetime
    ) -> int:
        with Session(self.engine) as session:
            if session.exec(select(GameRow).where(GameRow.key == key)).first():
                raise StoreError(f"a game with id {key!r} already exists in this database")
            if session.exec(select(GameRow).where(GameRow.name == name)).first():
                raise StoreError(f"a game named {name!r} already exists in this database")
            text = dump_state(initial)
            row = GameRow(
                key=key,
                name=name,
                address=address,
                language=language,
                created_at=at,
                initial_state=text,
                state=text,
            )
            session.add(row)
            session.commit()
            assert row.id is not None
            if self._kept is not None:
                self._kept.forget()
            return row.id

    def delete_game(self, game_id: int) -> None:
        """Remove a game and every row of it: how a failed `init` leaves nothing behind."""
        with Session(self.engine) as session:
            tables = (EventRow, InboundRow, OutboxRow, StrangerRow, MailboxRow, ChainRow)
            for table in (*tables, ConfirmationRow):
                session.execute(delete(table).where(col(table.game_id) == game_id))
            session.execute(delete(GameRow).where(col(GameRow.id) == game_id))
            session.commit()
        if self._kept is not None:
            self._kept.forget()

    def snapshot(self, game_id: int) -> tuple[GameState, int]:
        """The latest state snapshot and the sequence number of the last event it includes."""
        with Session(self.engine) as session:
            row = session.get(GameRow, game_id)
            if row is None:
                raise StoreError(f"no game {game_id}")
            return load_state(row.state), row.snapshot_seq

    def initial(self, game_id: int) -> GameState:
        with Session(self.engine) as session:
            row = session.get(GameRow, game_id)
            if row is None:
                raise StoreError(f"no game {game_id}")
            return load_state(row.initial_state)

    def events(self, game_id: int, after: int = 0) -> list[tuple[datetime, dict[str, Any]]]:
        return [(at, payload) for _, at, _, payload in self.event_log(game_id, after)]

    def last_event_at(self, game_id: int) -> datetime | None:
        """When the game's latest event was applied: the log's times never go back."""
        with Session(self.engine) as session:
            query = select(func.max(col(EventRow.at))).where(EventRow.game_id == game_id)
            latest: datetime | None = session.exec(query).one()
            return latest

    def event_log(
        self, game_id: int, after: int = 0
    ) -> list[tuple[int, datetime, str | None, dict[str, Any]]]:
        """The events after `after` with their sequence and the Message-ID of their mail."""
        with Session(self.engine) as session:
            rows = session.exec(
                select(EventRow)
                .where(EventRow.game_id == game_id, EventRow.seq > after)
                .order_by(col(EventRow.seq))
            ).all()
            return [(r.seq, r.at, r.message_id, json.loads(r.payload)) for r in rows]

    def chain(self, game_id: int) -> list[ChainRow]:
        """The game's hash chain, link by link (213)."""
        with Session(self.engine) as session:
            query = select(ChainRow).where(ChainRow.game_id == game_id).order_by(col(ChainRow.seq))
            return list(session.exec(query).all())

    def chain_head(self, game_id: int) -> tuple[int, str]:
        """The number and head of the chain's last link; (0, GENESIS) before the first."""
        with Session(self.engine) as session:
            row = session.exec(
                select(ChainRow.seq, ChainRow.head)
                .where(ChainRow.game_id == game_id)
                .order_by(col(ChainRow.seq).desc())
                .limit(1)
            ).first()
            return (int(row[0]), str(row[1])) if row else (0, GENESIS)

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
        key: str | None = None,
    ) -> None:
        """A message that made processing fail: kept in the quarantine folder, noted here.

        `key` is the mail's dedupe key (`InboundMail.dedupe_key`); without it, one made from
        the sender and Message-ID alone.
        """
        key = key or dedupe_key(sender, message_id, "")
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

    # ----- one owner per game ---------------------------------------------------------------

    def acquire(
        self, game_id: int, owner: str, now: datetime, seconds: float, dead: str | None = None
    ) -> bool:
        """Take the game's lease when it is free, expired, already ours, or held by `dead` (a
        process known to be gone); True when held."""
        until = now + timedelta(seconds=seconds)
        free = (_OWNERS.owner == owner) | (_OWNERS.expires_at < now)
        if dead is not None:
            free = free | (_OWNERS.owner == dead)
        with Session(self.engine) as session:
            connection = session.connection()
            taken = connection.execute(
                update(_OWNERS_T)
                .where(_OWNERS.game_id == game_id, free)
                .values(owner=owner, expires_at=until)
            ).rowcount
            if not taken:
                exists = connection.execute(
                    select(_OWNERS.game_id).where(_OWNERS.game_id == game_id)
                ).first()
                if exists is not None:
                    return False
                try:
                    connection.execute(
                        insert(_OWNERS_T).values(game_id=game_id, owner=owner, expires_at=until)
                    )
                except IntegrityError:  # another process inserted it first
                    session.rollback()
                    return False
            session.commit()
            return True

    def renew(self, game_id: int, owner: str, now: datetime, seconds: float) -> bool:
        """Extend our lease; False when another process holds the game now."""
        with Session(self.engine) as session:
            renewed = _renew(session, game_id, owner, now + timedelta(seconds=seconds))
            session.commit()
            return renewed

    def release(self, game_id: int, owner: str) -> None:
        """Give the game up at once (a clean stop), so another process may take it."""
        with Session(self.engine) as session:
            session.connection().execute(
                delete(_OWNERS_T).where(_OWNERS.game_id == game_id, _OWNERS.owner == owner)
            )
            session.commit()

    def holder(self, game_id: int, now: datetime) -> str | None:
        """The process that holds the game's lease now, if any."""
        with Session(self.engine) as session:
            row = session.get(GameOwnerRow, game_id)
            return row.owner if row is not None and row.expires_at >= now else None

    def held_by(self, owner: str, now: datetime) -> int:
        """How many games a process holds now."""
        with Session(self.engine) as session:
            count = session.exec(
                select(func.count())
                .select_from(GameOwnerRow)
                .where(GameOwnerRow.owner == owner, col(GameOwnerRow.expires_at) >= now)
            ).one()
            return int(count)

    def beat(self, worker: str, now: datetime, seconds: float) -> int:
        """A live process's heartbeat; returns how many processes are alive (itself included)."""
        until = now + timedelta(seconds=seconds)
        with Session(self.engine) as session:
            connection = session.connection()
            found = connection.execute(
                update(_WORKERS_T).where(_WORKERS.name == worker).values(expires_at=until)
            ).rowcount
            if not found:
                connection.execute(insert(_WORKERS_T).values(name=worker, expires_at=until))
            connection.execute(delete(_WORKERS_T).where(_WORKERS.expires_at < now))
            alive = connection.execute(
                select(func.count()).select_from(_WORKERS_T).where(_WORKERS.expires_at >= now)
            ).scalar()
            session.commit()
            return int(alive or 1)

    def leave(self, worker: str) -> None:
        with Session(self.engine) as session:
            session.connection().execute(delete(_WORKERS_T).where(_WORKERS.name == worker))
            session.commit()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Every unit of work inside is one SAVEPOINT of a single transaction, committed at the
        end: a replay's thousands of mails and deadlines pay for one commit, and a unit that
        fails is still undone alone. Only for the throw-away store in memory, and nothing may
        read the store apart from the units until the batch ends.

        The units also keep in memory what the batch has written that they would otherwise
        read back (`_Batch`: the inbound mail's keys, each sender's day, the other games),
        and the game's row (its event count and state snapshot) is written once, when the
        batch ends: the rows the batch leaves are the ones its units would have left."""
        if not self.memory:
            raise StoreError("batched commits are for a replay's store in memory")
        with Session(self.engine, expire_on_commit=False) as session:
            self._batch = session
            self._kept = _Batch()
            try:
                yield
                connection = self._batch_connection or session.connection()
                for game_id, row in self._kept.games_rows.items():
                    UnitOfWork(session, game_id, connection).write_games_row(*row)
                session.commit()
            finally:
                self._batch = self._batch_connection = self._kept = None
                self._known.clear()

    @contextmanager
    def unit(self, game_id: int) -> Iterator[UnitOfWork]:
        if self._batch is not None:
            if self._batch_connection is None:  # the batch's transaction begins here
                self._batch_connection = self._batch.connection()
            kept = self._kept
            assert kept is not None
            work = UnitOfWork(self._batch, game_id, self._batch_connection, kept)
            driver = work.driver()
            rows = dict(kept.games_rows)  # as the unit found them: put back if it fails
            if driver is None:  # not SQLite's own driver: SQLAlchemy's SAVEPOINT
                try:
                    with self._batch.begin_nested():
                        yield work
                        work.flush()
                except BaseException:
                    kept.undo(rows)
                    raise
                return
            # The SAVEPOINT on SQLite's connection itself, inside the batch's transaction
            # (SQLAlchemy's own cost more than the unit's statements; nothing else reads
            # the session meanwhile, see `batch`)
            driver.execute("SAVEPOINT unit")
            # The event and snapshot numbers the last unit left: only the batch's units write
            # the game, so they need not be read again (kept only once a unit is released)
            # (a unit inside another reads them: the outer one's are not known yet)
            nested = self._open > 0
            if not nested:
                work._seq, work._snapshot_seq = self._known.get(game_id, (None, None))
            self._open += 1
            try:
                yield work
                work.flush()
                known = work.known()
            except BaseException:
                driver.execute("ROLLBACK TO SAVEPOINT unit")
                driver.execute("RELEASE SAVEPOINT unit")
                kept.undo(rows)
                raise
            finally:
                self._open -= 1
            driver.execute("RELEASE SAVEPOINT unit")
            self._known.clear()
            if nested:
                self._inner = True  # the outer unit's numbers may be stale: not kept
            elif not self._inner:
                self._known[game_id] = known
            self._inner = self._inner and nested
            return
        with Session(self.engine, expire_on_commit=False) as session:
            work = UnitOfWork(session, game_id)
            try:
                fence = self.fences.get(game_id)
                if fence is not None:  # first, so the write lock is taken before any read
                    owner, seconds = fence
                    until = datetime.now(UTC) + timedelta(seconds=seconds)
                    if not _renew(session, game_id, owner, until):
                        raise LostGame(f"game {game_id} is worked by another process now")
                yield work
                work.flush()
                session.commit()
            except BaseException:
                session.rollback()
                raise


def _renew(session: Session, game_id: int, owner: str, until: datetime) -> bool:
    """Extend the lease in the session's transaction; on PostgreSQL the row stays locked
    until the commit, so a process trying to take the game over waits and then fails."""
    result = session.connection().execute(
        update(_OWNERS_T)
        .where(_OWNERS.game_id == game_id, _OWNERS.owner == owner)
        .values(expires_at=until)
    )
    return bool(result.rowcount)


_TABLES = SQLModel.metadata.tables
_INBOUND_T, _EVENTS_T = _TABLES[InboundRow.__tablename__], _TABLES[EventRow.__tablename__]
_GAMES_T, _OUTBOX_T = _TABLES[GameRow.__tablename__], _TABLES[OutboxRow.__tablename__]
_STRANGERS_T = _TABLES[StrangerRow.__tablename__]
_OWNERS_T, _WORKERS_T = _TABLES[GameOwnerRow.__tablename__], _TABLES[WorkerRow.__tablename__]
_OWNERS, _WORKERS, _OUTBOX = _OWNERS_T.c, _WORKERS_T.c, _OUTBOX_T.c
_INBOUND, _EVENTS, _GAMES, _STRANGERS = _INBOUND_T.c, _EVENTS_T.c, _GAMES_T.c, _STRANGERS_T.c
_CONFIRM_T = _TABLES[ConfirmationRow.__tablename__]
_CONFIRM = _CONFIRM_T.c
_CONFIRM_COLUMNS = (_CONFIRM.token, _CONFIRM.kind, _CONFIRM.address, _CONFIRM.name, _CONFIRM.old)
_CONFIRM_BY_TOKEN = columns(*_CONFIRM_COLUMNS).where(
    _CONFIRM.game_id == bindparam("g"),
    _CONFIRM.token == bindparam("t"),
    _CONFIRM.status == "pending",
    _CONFIRM.created_at >= bindparam("since"),
)
_CONFIRM_BY_ADDRESS = columns(*_CONFIRM_COLUMNS).where(
    _CONFIRM.game_id == bindparam("g"),
    _CONFIRM.address == bindparam("a"),
    _CONFIRM.status == "pending",
    _CONFIRM.created_at >= bindparam("since"),
)
_JOINS_TODAY = (
    select(func.count())
    .select_from(_CONFIRM_T)
    .where(
        _CONFIRM.game_id == bindparam("g"),
        _CONFIRM.kind == "join",
        _CONFIRM.day == bindparam("d"),
    )
)
_CLOSE_CONFIRM = (
    update(_CONFIRM_T)
    .where(_CONFIRM.game_id == bindparam("g"), _CONFIRM.token == bindparam("t"))
    .values(status="confirmed")
)
_INSERT_CONFIRM = insert(_CONFIRM_T)
_ANSWER_BY_TOKEN = columns(_CONFIRM.address, _CONFIRM.name).where(
    _CONFIRM.game_id == bindparam("g"),
    _CONFIRM.token == bindparam("t"),
    _CONFIRM.kind == "answer",
)
CONFIRM_DAYS = 7  # a request not confirmed within a week lapses

# Built once with bound parameters, so SQLAlchemy compiles each statement a single time.
_SEEN = select(_INBOUND.id).where(
    _INBOUND.game_id == bindparam("g"),
    _INBOUND.dedupe_key.in_(bindparam("k", expanding=True)),
    _INBOUND.status != "quarantined",  # a message put back after a fix is processed again
)
_SEEN_ELSEWHERE = select(_INBOUND.game_id).where(
    _INBOUND.dedupe_key.in_(bindparam("k", expanding=True)),
    _INBOUND.game_id != bindparam("g"),
    _INBOUND.status == "processed",
)
_FORGET_QUARANTINED = delete(_INBOUND_T).where(
    _INBOUND.game_id == bindparam("g"),
    _INBOUND.dedupe_key == bindparam("k"),
    _INBOUND.status == "quarantined",
)
# The note of mail whose sender was not shown to have sent it (screening: `believed`).
UNBELIEVED = "unbelieved "
NO_COMMAND = "no_command"  # the note of mail with no command in it (`_TODAY`'s third count)
QUARANTINED = "quarantined"
_SPENDING = ("processed", "refused")  # the statuses that spend a sender's daily allowance
_INBOUND_KEYS = columns(_INBOUND.dedupe_key, _INBOUND.status).where(
    _INBOUND.game_id == bindparam("g")
)
_GAME_IDS = columns(_GAMES.id)
_TODAY = (
    select(
        func.count(),
        func.coalesce(func.sum(_INBOUND.commands), 0),
        func.coalesce(
            func.sum(case((_INBOUND.note == NO_COMMAND, 1), else_=0)),
            0,
        ),
    )
    .select_from(_INBOUND_T)
    .where(
        _INBOUND.game_id == bindparam("g"),
        _INBOUND.sender == bindparam("a"),
        _INBOUND.received_at >= bindparam("start"),
        _INBOUND.received_at < bindparam("end"),
        _INBOUND.status.in_(_SPENDING),
        ~_INBOUND.note.startswith(UNBELIEVED),  # a forger never spends a player's allowance
    )
)
_NOTES_TODAY = (
    select(func.count())
    .select_from(_STRANGERS_T)
    .where(_STRANGERS.game_id == bindparam("g"), _STRANGERS.day == bindparam("d"))
)
_LAST_SEQ = select(func.max(_EVENTS.seq)).where(_EVENTS.game_id == bindparam("g"))
_SNAPSHOT_SEQ = select(_GAMES.snapshot_seq).where(_GAMES.id == bindparam("g"))
_GAME_UPDATE = update(_GAMES_T).where(_GAMES.id == bindparam("g"))
_SAVE_COUNT = _GAME_UPDATE.values(events=bindparam("e"))
_SAVE_SNAPSHOT = _GAME_UPDATE.values(
    events=bindparam("e"), state=bindparam("s"), snapshot_seq=bindparam("q")
)
_NOTED = select(_STRANGERS.id).where(
    _STRANGERS.game_id == bindparam("g"),
    _STRANGERS.address == bindparam("a"),
    _STRANGERS.day == bindparam("d"),
)
_INSERT_INBOUND = insert(_INBOUND_T)
_INSERT_EVENT = insert(_EVENTS_T)
_INSERT_OUTBOX = insert(_OUTBOX_T)
_SENT_MAIL = columns(_OUTBOX.message_id, _OUTBOX.recipient, _OUTBOX.kind, _OUTBOX.raw).where(
    _OUTBOX.game_id == bindparam("g"),
    _OUTBOX.message_id.in_(bindparam("m", expanding=True)),
)
_INSERT_STRANGER = insert(_STRANGERS_T)
_CHAIN_T = _TABLES[ChainRow.__tablename__]
_INSERT_LINK = insert(_CHAIN_T)
_MAIL_LINKS = (
    columns(_CHAIN_T.c.raw, _CHAIN_T.c.at, _CHAIN_T.c.record)
    .where(_CHAIN_T.c.game_id == bindparam("g"), _CHAIN_T.c.kind == "mail")
    .order_by(_CHAIN_T.c.seq)
)
_LINKS_AFTER = (
    columns(_CHAIN_T.c.kind, _CHAIN_T.c.at)
    .where(_CHAIN_T.c.game_id == bindparam("g"), _CHAIN_T.c.at > bindparam("after"))
    .order_by(_CHAIN_T.c.seq)
)
# A player's own mail to the game: obeyed, or refused for a limit; never a stranger's (nor the
# confirmation a stranger or a new address sends), never mail not shown to be its sender's,
# never a player's mail written to someone else and resent here (ARCHIVE, 213).
_PLAYERS_MAIL = columns(_INBOUND.dedupe_key).where(
    _INBOUND.game_id == bindparam("g"),
    or_(
        and_(_INBOUND.status == "processed", _INBOUND.note != "confirmation"),
        and_(
            _INBOUND.status == "refused",
            ~_INBOUND.note.startswith(UNBELIEVED),
            ~_INBOUND.note.startswith("not_addressed"),
        ),
    ),
)
# A newcomer's request to join and its confirmation, sent while a stranger: shared in ARCHIVE
# once the King admitted the request (the newcomer's mail is then the table's, 213).
_JOINING_MAIL = columns(_INBOUND.dedupe_key).where(
    _INBOUND.game_id == bindparam("g"),
    _INBOUND.sender.in_(bindparam("a", expanding=True)),
    or_(
        and_(_INBOUND.status == "stranger", _INBOUND.note == "join"),
        and_(_INBOUND.status == "processed", _INBOUND.note == "confirmation"),
    ),
)


class _Fast:
    """One of the statements above, compiled once for SQLite and run on the driver's own
    connection, inside the session's transaction: the same SQL, parameters and column types
    as SQLAlchemy's execution would give (its bind and result processors, the columns'
    defaults), without its per-statement machinery, which cost more than SQLite itself did
    on a replay's dozen statements per mail (issue 19)."""

    def __init__(self, statement: Any, keys: Sequence[str], dialect: Any) -> None:
        compiled = statement.compile(dialect=dialect, column_keys=list(keys))
        self.sql: str = compiled.string
        processors = compiled._bind_processors
        given = set(keys)
        # Each placeholder, in order: (the caller's key, or None for a value fixed here; the
        # fixed value; its bind processor; whether it is an expanding IN list)
        self.slots: list[tuple[str | None, Any, Any, bool]] = []
        for name in compiled.positiontup or ():
            bind = compiled.binds.get(name)
            expanding = bool(bind is not None and bind.expanding)
            column = next((c for c in compiled.insert_prefetch if c.key == name), None)
            if name in given:
                process = processors.get(name)
                if process is not None and bind is not None and not expanding:
                    process = _utc_text(process, bind.type)
                self.slots.append((name, None, process, expanding))
            elif column is not None and column.default is not None and column.default.is_scalar:
                self.slots.append((None, column.default.arg, processors.get(name), False))
            elif bind is not None and bind.callable is None and bind.value is not None:
                self.slots.append((None, bind.value, processors.get(name), expanding))
            else:
                raise StoreError(f"no value for {name!r} of {self.sql!r}")
        self.expanding = any(slot[3] for slot in self.slots)
        self.results = [
            entry.type._cached_result_processor(dialect, None) for entry in compiled._result_columns
        ]
        self.processed = any(self.results)
        self._sizes: dict[tuple[int, ...], str] = {}

    def run(self, driver: Any, params: dict[str, Any]) -> _Rows:
        values: list[Any] = []
        sizes: list[int] = []
        for key, fixed, process, expanding in self.slots:
            value = params[key] if key is not None else fixed
            if expanding:
                items = list(value)
                if not items:  # an empty IN: SQLAlchemy's own spelling of it, never guessed
                    raise _Unhandled
                sizes.append(len(items))
                values.extend(process(v) for v in items) if process else values.extend(items)
            else:
                values.append(process(value) if process else value)
        cursor = driver.execute(self._expanded(sizes) if sizes else self.sql, values)
        rows = cursor.fetchall() if cursor.description is not None else []
        if self.processed and rows:
            results = self.results
            rows = [
                tuple(p(v) if p else v for p, v in zip(results, row, strict=True)) for row in rows
            ]
        return _Rows(rows, cursor.rowcount)

    def run_many(self, driver: Any, rows: list[dict[str, Any]]) -> None:
        """An INSERT of many rows, each with the same keys (no expanding IN lists)."""
        if self.expanding:
            raise StoreError(f"an IN list in a statement of many rows: {self.sql!r}")
        driver.executemany(
            self.sql,
            [
                [
                    process(value) if process else value
                    for value, process in (
                        (row[key] if key is not None else fixed, process)
                        for key, fixed, process, _ in self.slots
                    )
                ]
                for row in rows
            ],
        )

    def _expanded(self, sizes: list[int]) -> str:
        """The SQL with each expanding IN list given as many placeholders as it has items."""
        key = tuple(sizes)
        sql = self._sizes.get(key)
        if sql is None:
            parts = _POSTCOMPILE.split(self.sql)
            pieces = [parts[0]]
            for size, rest in zip(sizes, parts[2::2], strict=True):
                pieces.append(", ".join("?" * size) + rest)
            sql = self._sizes[key] = "".join(pieces)
        return sql


_POSTCOMPILE = re.compile(r"__\[POSTCOMPILE_(\w+)\]")

# Times the bind processor of an aware time column is tried on before `_utc_text` stands in
# for it: the year's first instant and its last microsecond, and a year of three digits
_UTC_SAMPLES = (
    datetime(2026, 1, 1, tzinfo=UTC),
    datetime(2026, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(999, 3, 4, 5, 6, 7, 8, tzinfo=UTC),
)


def _utc_text(process: Any, kind: Any) -> Any:
    """A bind processor that writes a time already in UTC as the text SQLAlchemy's does for an
    aware time column on SQLite (`YYYY-MM-DD HH:MM:SS.ffffff`), in one call instead of its
    conversion to UTC and formatting through a dict: every inbound row, event and link has
    one or two (issue 19). Any other value (another zone, none, not a time) is left to
    SQLAlchemy's own; so is a column whose processor writes the samples otherwise."""
    if not isinstance(kind, UTCDateTime):
        return process
    try:
        if any(process(t) != t.isoformat(" ", "microseconds")[:-6] for t in _UTC_SAMPLES):
            return process
    except Exception:  # a processor that fails on a sample is kept as it is
        return process

    def text(value: Any) -> Any:
        if type(value) is datetime and value.tzinfo is UTC:
            return value.isoformat(" ", "microseconds")[:-6]  # less its `+00:00`
        return process(value)

    return text


class _Unhandled(Exception):
    """A statement `_Fast` does not run: SQLAlchemy runs it."""


class _Rows:
    """The rows of a `_Fast` statement, read the ways `UnitOfWork` reads SQLAlchemy's."""

    def __init__(self, rows: list[tuple[Any, ...]], rowcount: int) -> None:
        self.rows = rows
        self.rowcount = rowcount

    def first(self) -> tuple[Any, ...] | None:
        return self.rows[0] if self.rows else None

    def one(self) -> tuple[Any, ...]:
        if len(self.rows) != 1:
            raise StoreError(f"{len(self.rows)} rows where one was expected")
        return self.rows[0]

    def scalar(self) -> Any:
        return self.rows[0][0] if self.rows else None

    def all(self) -> list[tuple[Any, ...]]:
        return self.rows


_COMPILED: dict[tuple[int, tuple[str, ...]], tuple[Any, _Fast | None]] = {}


def _fast(statement: Any, params: dict[str, Any], dialect: Any) -> _Fast | None:
    """The statement compiled for these parameters' keys, once per process (None: one
    `_Fast` cannot run, left to SQLAlchemy)."""
    keys = tuple(params)
    found = _COMPILED.get((id(statement), keys))
    if found is None or found[0] is not statement:
        try:
            made: _Fast | None = _Fast(statement, keys, dialect)
        except StoreError:
            made = None
        found = _COMPILED[(id(statement), keys)] = (statement, made)
    return found[1]


def _driver_of(connection: Connection) -> Any:
    """SQLite's own connection under a session's, or None on any other database."""
    if connection.dialect.name != "sqlite" or connection.dialect.paramstyle != "qmark":
        return None
    return connection.connection.driver_connection


class _Batch:
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


class UnitOfWork:
    """What one processed mail or tick writes, committed together.

    Writes are prebuilt SQL statements (SQLAlchemy Core) run in the session's transaction:
    the rows are never read back, so the ORM's identity map would only cost time. Inside a
    batch, `kept` answers the reads whose answer the batch's own writes decide.
    """

    def __init__(
        self,
        session: Session,
        game_id: int,
        connection: Connection | None = None,
        kept: _Batch | None = None,
    ) -> None:
        self.session = session
        self.game_id = game_id
        self._kept = kept
        self._seq: int | None = None
        self._snapshot_seq: int | None = None
        self._outbox: list[dict[str, Any]] = []
        self.appended: list[dict[str, Any]] = []  # the events of this unit, for its link
        # The sender's authentication verdict of this unit's mail ({"ok", "why"}), for its link
        self.authentication: dict[str, Any] | None = None
        # When this unit's mail was delivered, for its inbound row and its link: earlier than
        # the time it takes effect when a later event was logged before it was read
        self.delivered: datetime | None = None
        self._link = b""  # how this unit's link is named in its mail
        self._connection = connection  # the session's, taken once (see `_run`)
        self._driver: Any = None  # SQLite's own connection under it, for `_Fast`

    def flush(self) -> None:
        """Write the queued outbox rows in one statement (called before the commit), each
        naming the chain's link this unit made."""
        if self._outbox:
            if self._link:
                for row in self._outbox:
                    row["raw"] = row["raw"].replace(CHAIN_PENDING, CHAIN_HEADER + self._link, 1)
            driver = self.driver()
            assert self._connection is not None
            fast = _fast(_INSERT_OUTBOX, self._outbox[0], self._connection.dialect)
            if driver is not None and fast is not None:
                fast.run_many(driver, self._outbox)
            else:
                self._connection.execute(_INSERT_OUTBOX, self._outbox)
            self._outbox = []

    def append_link(
        self, seq: int, kind: str, at: datetime, raw: bytes | None, record: str, head: str
    ) -> None:
        """One link of the hash chain (see `referee.core.chain`)."""
        self._run(
            _INSERT_LINK,
            {
                "game_id": self.game_id,
                "seq": seq,
                "kind": kind,
                "at": at,
                "raw": raw,
                "record": record,
                "head": head,
            },
        )
        self._link = f"{seq} {head}".encode("ascii")

    def name_link(self, seq: int, head: str) -> None:
        """The link this unit's mail names when the unit makes none of its own (the note to a
        mail set aside unread): the one the game stands at."""
        self._link = f"{seq} {head}".encode("ascii")

    def driver(self) -> Any:
        """SQLite's own connection under the session's (None on another database), taken
        with the session's connection the first time (which begins its transaction)."""
        if self._connection is None:
            self._connection = self.session.connection()
        if self._driver is None:
            self._driver = _driver_of(self._connection)
        return self._driver

    def _run(self, statement: Any, params: dict[str, Any]) -> Any:
        driver = self.driver()
        assert self._connection is not None
        fast = _fast(statement, params, self._connection.dialect) if driver else None
        if fast is not None:
            try:
                return fast.run(driver, params)
            except _Unhandled:
                pass
        return self._connection.execute(statement, params)

    def seen(self, mail: InboundMail) -> bool:
        """Whether this mail (same sender, Message-ID and body) was applied already."""
        keys = list(mail.dedupe_keys)  # its own, and those older versions recorded
        if self._kept is not None:
            statuses = self._inbound_keys()
            return any(statuses.get(key, QUARANTINED) != QUARANTINED for key in keys)
        return self._run(_SEEN, {"g": self.game_id, "k": keys}).first() is not None

    def _inbound_keys(self) -> dict[str, str]:
        """A batch's: the status of each inbound mail of the game, by its dedupe key."""
        assert self._kept is not None
        found = self._kept.keys.get(self.game_id)
        if found is None:
            rows = self._run(_INBOUND_KEYS, {"g": self.game_id}).all()
            found = self._kept.keys[self.game_id] = {str(k): str(s) for k, s in rows}
        return found

    def seen_elsewhere(self, mail: InboundMail) -> int | None:
        """Another game of this database that already applied this very mail (same sender,
        Message-ID and body), or None: a signed mail acts in one game only (issue 15)."""
        if self._kept is not None:  # a batch's store holding no other game: none (foreign key)
            if self._kept.games is None:
                self._kept.games = {int(g) for (g,) in self._run(_GAME_IDS, {}).all()}
            if not self._kept.games - {self.game_id}:
                return None
        keys = list(mail.dedupe_keys)
        found = self._run(_SEEN_ELSEWHERE, {"g": self.game_id, "k": keys}).first()
        return int(found[0]) if found is not None else None

    def record_inbound(
        self, mail: InboundMail, at: datetime, status: str, note: str = "", commands: int = 0
    ) -> None:
        key = mail.dedupe_key  # made from the mail's fields each time it is asked
        statuses = self._inbound_keys() if self._kept is not None else None
        if statuses is None or statuses.get(key) == QUARANTINED:
            self._run(_FORGET_QUARANTINED, {"g": self.game_id, "k": key})
        note = note[:500]
        self._run(
            _INSERT_INBOUND,
            {
                "game_id": self.game_id,
                "dedupe_key": key,
                "message_id": mail.message_id,
                "sender": mail.sender,
                "received_at": at,
                "delivered_at": self.delivered or at,
                "status": status,
                "note": note,
                "commands": commands,
            },
        )
        if statuses is None or self._kept is None:
            return
        statuses[key] = str(status)
        # The row counts in its sender's day as `_TODAY` reads it: the day its time is stored
        # under (SQLite's text of the time as given), when it spends the sender's allowance
        if status in _SPENDING and not note.startswith(UNBELIEVED):
            day = self._kept.days.get((self.game_id, mail.sender, date(at.year, at.month, at.day)))
            if day is not None:
                day[0] += 1
                day[1] += commands
                day[2] += note == NO_COMMAND

    def mail_links(self) -> list[tuple[bytes, datetime, str]]:
        """Every message the chain holds so far, in link order, with the time it took effect
        and its link's record (which holds, when it was read after a later event, the time it
        was delivered: `chain.delivered_of`)."""
        rows = self._run(_MAIL_LINKS, {"g": self.game_id}).all()
        return [(bytes(raw), at, str(record)) for raw, at, record in rows if raw is not None]

    def links_after(self, after: datetime) -> list[tuple[str, datetime]]:
        """The kind and time of every link of the chain later than `after`, in order: the
        events logged since then (`tick`: a deadline; `mail`; `start`)."""
        rows = self._run(_LINKS_AFTER, {"g": self.game_id, "after": after}).all()
        return [(str(kind), at) for kind, at in rows]

    def players_mail_keys(self) -> set[str]:
        """The dedupe keys of the mail the players sent the game as themselves (ARCHIVE)."""
        return {key for (key,) in self._run(_PLAYERS_MAIL, {"g": self.game_id}).all()}

    def joining_mail_keys(self, addresses: Sequence[str]) -> set[str]:
        """The dedupe keys of the requests to join and their confirmations these addresses sent
        while strangers (ARCHIVE shares them once the King admitted the request)."""
        if not addresses:
            return set()
        params = {"g": self.game_id, "a": list(addresses)}
        return {key for (key,) in self._run(_JOINING_MAIL, params).all()}

    def sender_today(self, sender: str, at: datetime) -> SenderDay:
        """What this sender has asked of the referee so far on `at`'s day (UTC). A batch
        reads each sender's day once and counts its own mail of that day from then on."""
        today = at.astimezone(UTC).date()
        key = (self.game_id, sender, today)
        kept = self._kept.days.get(key) if self._kept is not None else None
        if kept is None:
            start = datetime.combine(today, time(), tzinfo=UTC)
            params = {"g": self.game_id, "a": sender, "start": start, "end": start + timedelta(1)}
            mails, commands, empty = self._run(_TODAY, params).one()
            kept = [int(mails), int(commands), int(empty)]
            if self._kept is not None:
                self._kept.days[key] = kept
        return SenderDay(kept[0], kept[1], kept[2])

    def snapshot_seq(self) -> int:
        """The last event the game's state snapshot includes."""
        row = self._kept.games_rows.get(self.game_id) if self._kept is not None else None
        if row is not None and row[2] is not None:  # a batch's, not written yet
            return row[2]
        if self._snapshot_seq is None:
            self._snapshot_seq = int(self._run(_SNAPSHOT_SEQ, {"g": self.game_id}).scalar() or 0)
        return self._snapshot_seq

    def known(self) -> tuple[int, int]:
        """(the last event's number, the snapshot's): what a batch's next unit starts from."""
        return self.last_seq(), self.snapshot_seq()

    def last_seq(self) -> int:
        if self._seq is None:
            self._seq = int(self._run(_LAST_SEQ, {"g": self.game_id}).scalar() or 0)
        return self._seq

    def append_event(self, payload: dict[str, Any], at: datetime, message_id: str | None) -> None:
        self._seq = self.last_seq() + 1
        self.appended.append(payload)
        self._run(
            _INSERT_EVENT,
            {
                "game_id": self.game_id,
                "seq": self._seq,
                "at": at,
                "message_id": message_id,
                "payload": json.dumps(payload, ensure_ascii=False, separators=(",", ":")),
            },
        )

    def save_state(self, state: GameState, force: bool = False) -> None:
        """Snapshot the state every SNAPSHOT_EVERY events; the event log covers the gap."""
        seq = self.last_seq()
        if not force:
            force = seq - self.snapshot_seq() >= SNAPSHOT_EVERY
        if self._kept is not None:  # a batch's: written once, when the batch ends
            _, snapshot, taken = self._kept.games_rows.get(self.game_id, (0, None, None))
            if force:
                snapshot, taken = state, seq
                self._snapshot_seq = seq
            self._kept.games_rows[self.game_id] = (state.events, snapshot, taken)
        elif force:
            self.write_games_row(state.events, state, seq)
            self._snapshot_seq = seq
        else:
            self.write_games_row(state.events, None, None)

    def write_games_row(self, events: int, state: GameState | None, seq: int | None) -> None:
        """The game's event count, and its state snapshot up to event `seq` when given."""
        if state is not None:
            snapshot = {"g": self.game_id, "e": events, "s": dump_state(state), "q": seq}
            self._run(_SAVE_SNAPSHOT, snapshot)
        else:
            self._run(_SAVE_COUNT, {"g": self.game_id, "e": events})

    def enqueue(self, message_id: str, recipient: str, kind: str, raw: bytes, at: datetime) -> None:
        self._outbox.append(
            {
                "game_id": self.game_id,
                "message_id": message_id,
                "recipient": recipient,
                "kind": kind,
                "created_at": at,
                "raw": raw,
                "status": "pending",
                "attempts": 0,
                "next_attempt_at": at,
                "sent_at": None,
                "last_error": "",
            }
        )

    def sent_mail(self, message_ids: Sequence[str]) -> list[SentMail]:
        """The game's outgoing mails with these Message-IDs (queued, sent or failed)."""
        if not message_ids:
            return []
        rows = self._run(_SENT_MAIL, {"g": self.game_id, "m": list(message_ids)}).all()
        found = {row[0]: SentMail(row[0], row[1], row[2], bytes(row[3])) for row in rows}
        queued = {r["message_id"]: r for r in self._outbox}  # this unit's, not yet written
        for mid, row in queued.items():
            found.setdefault(mid, SentMail(mid, row["recipient"], row["kind"], row["raw"]))
        return [found[m] for m in message_ids if m in found]

    def pending(self, at: datetime, token: str = "", address: str = "") -> Pending | None:
        """The request that waits for a confirmation, by its token or by who must confirm."""
        since = at - timedelta(days=CONFIRM_DAYS)
        if token:
            params = {"g": self.game_id, "t": token, "since": since}
            row = self._run(_CONFIRM_BY_TOKEN, params).first()
        else:
            params = {"g": self.game_id, "a": address, "since": since}
            row = self._run(_CONFIRM_BY_ADDRESS, params).first()
        return Pending(*row) if row is not None else None

    def joins_today(self, day: str) -> int:
        """How many requests to join strangers have made on `day` (all of them together)."""
        return int(self._run(_JOINS_TODAY, {"g": self.game_id, "d": day}).scalar() or 0)

    def add_pending(self, request: Pending, at: datetime) -> None:
        self._run(
            _INSERT_CONFIRM,
            {
                "game_id": self.game_id,
                "token": request.token,
                "kind": request.kind,
                "address": request.address,
                "name": request.name,
                "old": request.old,
                "created_at": at,
                "day": at.date().isoformat(),
                "status": "pending",
            },
        )

    def confirmed(self, token: str) -> None:
        self._run(_CLOSE_CONFIRM, {"g": self.game_id, "t": token})

    def keep_answer(self, token: str, sender: str, facts: str, at: datetime) -> None:
        """The decisions of the referee's answer to a mail, under the token its Message-ID
        names: an APPEAL in reply to that answer is about them (212). The confirmations'
        table holds them (kind `answer`), never pending: nothing waits for them."""
        row = {"game_id": self.game_id, "token": token, "kind": "answer", "address": sender}
        row |= {"name": facts, "old": "", "created_at": at, "day": at.date().isoformat()}
        self._run(_INSERT_CONFIRM, {**row, "status": "answer"})

    def answer(self, token: str) -> tuple[str, str] | None:
        """(who was answered, the decisions as JSON) of the answer named by `token`."""
        row = self._run(_ANSWER_BY_TOKEN, {"g": self.game_id, "t": token}).first()
        return (str(row[0]), str(row[1])) if row is not None else None

    def first_note_today(self, address: str, day: str, cap: int | None = None) -> bool:
        """True once per address and day, and for at most `cap` addresses a day in all."""
        params = {"g": self.game_id, "a": address, "d": day}
        if self._run(_NOTED, params).first() is not None:
            return False
        if cap is not None and int(self._run(_NOTES_TODAY, params).scalar() or 0) >= cap:
            return False
        self._run(_INSERT_STRANGER, {"game_id": self.game_id, "address": address, "day": day})
        return True


@dataclass(frozen=True)
class SentMail:
    """One mail of the outbox, as a bounce names it."""

    message_id: str
    recipient: str
    kind: str
    raw: bytes


@dataclass(frozen=True)
class Pending:
    """A request waiting for its address's confirmation (see `ConfirmationRow`)."""

    token: str
    kind: str  # join | address | answer (the decisions of an answer, see `keep_answer`)
    address: str
    name: str
    old: str


@dataclass(frozen=True)
class SenderDay:
    """One sender's mail, commands and unanswerable mail on one day, before this mail."""

    mails: int
    commands: int
    empty: int
