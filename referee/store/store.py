"""The store: one transaction per processed mail or tick, SQLite or PostgreSQL (205, 213).

A unit of work writes the inbound record, the events, the new state snapshot and the outbox
rows together, so a crash leaves either all of them or none.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from sqlalchemy import event as sa_event
from sqlalchemy import func, inspect
from sqlalchemy.engine import Engine
from sqlalchemy.pool import StaticPool
from sqlmodel import Session, SQLModel, col, create_engine, select

from referee.core.codec import state_from_data, state_to_data
from referee.core.model import GameState
from referee.store.tables import EventRow, GameRow, InboundRow, OutboxRow, StrangerRow


class StoreError(RuntimeError):
    """The store cannot do what was asked (no such game, game exists already)."""


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
            cursor = connection.cursor()
            if not memory:
                cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=10000")
            cursor.close()

        return engine
    return create_engine(url, pool_pre_ping=True)


def dump_state(state: GameState) -> str:
    return json.dumps(state_to_data(state), ensure_ascii=False, separators=(",", ":"))


def load_state(text: str) -> GameState:
    return state_from_data(json.loads(text))


class Store:
    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)

    def create_schema(self) -> None:
        SQLModel.metadata.create_all(self.engine)

    def close(self) -> None:
        self.engine.dispose()

    def has_schema(self) -> bool:
        return inspect(self.engine).has_table("games")

    def game_id(self, name: str) -> int | None:
        if not self.has_schema():
            return None
        with Session(self.engine) as session:
            row = session.exec(select(GameRow).where(GameRow.name == name)).first()
            return row.id if row else None

    def create_game(
        self, name: str, address: str, language: str, initial: GameState, at: datetime
    ) -> int:
        with Session(self.engine) as session:
            if session.exec(select(GameRow).where(GameRow.name == name)).first():
                raise StoreError(f"a game named {name!r} already exists in this database")
            text = dump_state(initial)
            row = GameRow(
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
            return row.id

    def load(self, game_id: int) -> GameState:
        with Session(self.engine) as session:
            row = session.get(GameRow, game_id)
            if row is None:
                raise StoreError(f"no game {game_id}")
            return load_state(row.state)

    def initial(self, game_id: int) -> GameState:
        with Session(self.engine) as session:
            row = session.get(GameRow, game_id)
            if row is None:
                raise StoreError(f"no game {game_id}")
            return load_state(row.initial_state)

    def events(self, game_id: int) -> list[tuple[datetime, dict[str, Any]]]:
        with Session(self.engine) as session:
            rows = session.exec(
                select(EventRow).where(EventRow.game_id == game_id).order_by(col(EventRow.seq))
            ).all()
            return [(r.at, json.loads(r.payload)) for r in rows]

    def outbox(self, game_id: int | None = None, status: str | None = None) -> list[OutboxRow]:
        with Session(self.engine) as session:
            query = select(OutboxRow).order_by(col(OutboxRow.id))
            if game_id is not None:
                query = query.where(OutboxRow.game_id == game_id)
            if status is not None:
                query = query.where(OutboxRow.status == status)
            return list(session.exec(query).all())

    def inbound_count(self, game_id: int) -> int:
        with Session(self.engine) as session:
            count = session.exec(
                select(func.count()).select_from(InboundRow).where(InboundRow.game_id == game_id)
            ).one()
            return int(count)

    @contextmanager
    def unit(self, game_id: int) -> Iterator[UnitOfWork]:
        with Session(self.engine, expire_on_commit=False) as session:
            work = UnitOfWork(session, game_id)
            try:
                yield work
                session.commit()
            except BaseException:
                session.rollback()
                raise


class UnitOfWork:
    """What one processed mail or tick writes, committed together."""

    def __init__(self, session: Session, game_id: int) -> None:
        self.session = session
        self.game_id = game_id
        self._seq: int | None = None

    def seen(self, message_id: str) -> bool:
        found = self.session.exec(
            select(InboundRow.id).where(
                InboundRow.game_id == self.game_id, InboundRow.message_id == message_id
            )
        ).first()
        return found is not None

    def record_inbound(
        self, message_id: str, sender: str, at: datetime, status: str, note: str = ""
    ) -> None:
        self.session.add(
            InboundRow(
                game_id=self.game_id,
                message_id=message_id,
                sender=sender,
                received_at=at,
                status=status,
                note=note[:500],
            )
        )

    def append_event(self, payload: dict[str, Any], at: datetime, message_id: str | None) -> None:
        if self._seq is None:
            last = self.session.exec(
                select(func.max(EventRow.seq)).where(EventRow.game_id == self.game_id)
            ).one()
            self._seq = int(last or 0)
        self._seq += 1
        self.session.add(
            EventRow(
                game_id=self.game_id,
                seq=self._seq,
                at=at,
                message_id=message_id,
                payload=json.dumps(payload, ensure_ascii=False, separators=(",", ":")),
            )
        )

    def save_state(self, state: GameState) -> None:
        row = self.session.get(GameRow, self.game_id)
        assert row is not None
        row.state = dump_state(state)
        row.events = state.events
        self.session.add(row)

    def enqueue(self, message_id: str, recipient: str, kind: str, raw: bytes, at: datetime) -> None:
        self.session.add(
            OutboxRow(
                game_id=self.game_id,
                message_id=message_id,
                recipient=recipient,
                kind=kind,
                created_at=at,
                raw=raw,
                next_attempt_at=at,
            )
        )

    def first_note_today(self, address: str, day: str) -> bool:
        """True once per address and day: a stranger gets at most one short note a day."""
        found = self.session.exec(
            select(StrangerRow.id).where(
                StrangerRow.game_id == self.game_id,
                StrangerRow.address == address,
                StrangerRow.day == day,
            )
        ).first()
        if found is not None:
            return False
        self.session.add(StrangerRow(game_id=self.game_id, address=address, day=day))
        return True
