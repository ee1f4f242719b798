"""One owner per game: the game leases and the processes' heartbeats (205, 213).

A process holds a game by a lease row (`game_owners`) that it renews by heartbeat, and says it
is alive by a row of its own (`workers`); a lease that expired, or whose holder is known to be
gone, may be taken by another process. `renew_lease` renews a lease inside a unit of work's
own transaction, so a unit can never write a game another process has taken over.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import delete, func, insert, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, SQLModel, col, select

from referee.store.tables import GameOwnerRow, WorkerRow

_TABLES = SQLModel.metadata.tables
_OWNERS_T, _WORKERS_T = _TABLES[GameOwnerRow.__tablename__], _TABLES[WorkerRow.__tablename__]
_OWNERS, _WORKERS = _OWNERS_T.c, _WORKERS_T.c


class Leases:
    """The store's book of leases and heartbeats (a part of `Store`)."""

    engine: Engine

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
            renewed = renew_lease(session, game_id, owner, now + timedelta(seconds=seconds))
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

    def lease_expires(self, game_id: int) -> datetime | None:
        """When the game's lease runs out (or ran out: it may be past), None when none was
        ever taken or the last was given up."""
        with Session(self.engine) as session:
            row = session.get(GameOwnerRow, game_id)
            return row.expires_at if row is not None else None

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


def renew_lease(session: Session, game_id: int, owner: str, until: datetime) -> bool:
    """Extend the lease in the session's transaction; on PostgreSQL the row stays locked
    until the commit, so a process trying to take the game over waits and then fails."""
    result = session.connection().execute(
        update(_OWNERS_T)
        .where(_OWNERS.game_id == game_id, _OWNERS.owner == owner)
        .values(expires_at=until)
    )
    return bool(result.rowcount)
