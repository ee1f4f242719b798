"""Backup and restore of the store: `nomic-referee backup CONFIG FILE` and `restore` (205, 213).

A backup is always one SQLite file, whatever the database: from SQLite it is taken with
SQLite's online backup API (the service may go on writing meanwhile); from PostgreSQL every
table is copied into the file inside one REPEATABLE READ transaction, so it is one consistent
moment. `restore` brings the file up to this version's schema (an old backup restores into a
new version), refuses a database that already holds a game or a lease, and copies every table
back in one transaction, through the same SQLAlchemy code for both databases.

What a restored game needs: the leases and live workers are not restored (no process owns
the game yet); the IMAP position is forgotten, so the inbox is read again from the start and
what was applied before the backup is recognised by its dedupe key and only moved; mail that
was being sent is put back to wait, and it goes out again with the same Message-ID.
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import func, insert, select, text, update
from sqlalchemy.engine import make_url
from sqlmodel import SQLModel

from referee.private import create_private, private_database, private_folder
from referee.store.store import Store, StoreError
from referee.store.tables import GameOwnerRow, GameRow, MailboxRow, OutboxRow, WorkerRow

_LEASES = {GameOwnerRow.__tablename__, WorkerRow.__tablename__}
CHUNK = 500


@dataclass(frozen=True)
class Copied:
    games: int
    rows: int


def _sqlite_path(url: str) -> Path | None:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return None
    return Path(parsed.database)


def backup(url: str, target: Path) -> Copied:
    """Write the database at `url` to the new SQLite file `target` (never over a file)."""
    if target.exists():
        raise StoreError(f"{target} exists already: a backup never overwrites a file")
    partial = target.with_name(target.name + ".partial")
    partial.unlink(missing_ok=True)
    source = _sqlite_path(url)
    try:
        private_folder(target.parent)
        create_private(partial).close()  # mode 0600 before SQLite writes the players' mail in
        if source is not None:
            if not source.exists():
                raise StoreError(f"no database at {source}")
            with sqlite3.connect(source) as src, sqlite3.connect(partial) as dst:
                src.backup(dst)  # SQLite's online backup: a consistent copy while others write
            src.close()
            dst.close()
        else:
            _copy_postgresql(url, partial)
        partial.replace(target)
    finally:
        partial.unlink(missing_ok=True)
    return _count(f"sqlite:///{target}")


def _copy_postgresql(url: str, partial: Path) -> None:
    store = Store(url)
    copy = Store(f"sqlite:///{partial}")
    try:
        if store.pending_migrations():
            raise StoreError("the database has migrations pending: nomic-referee migrate first")
        copy.create_schema()
        with store.engine.connect() as connection:
            connection = connection.execution_options(isolation_level="REPEATABLE READ")
            with connection.begin(), copy.engine.begin() as out:
                for table in SQLModel.metadata.sorted_tables:
                    _copy_rows(connection, out, table)
    finally:
        store.close()
        copy.close()


def _copy_rows(source: object, target: object, table: object) -> int:
    from sqlalchemy import Table
    from sqlalchemy.engine import Connection

    assert isinstance(source, Connection) and isinstance(target, Connection)
    assert isinstance(table, Table)
    result = source.execute(select(table).order_by(*table.primary_key.columns))
    count = 0
    while rows := result.mappings().fetchmany(CHUNK):
        target.execute(insert(table), [dict(r) for r in rows])
        count += len(rows)
    return count


def _count(url: str) -> Copied:
    store = Store(url)
    try:
        with store.engine.connect() as connection:
            games = connection.execute(select(func.count()).select_from(GameRow)).scalar_one()
            rows = sum(
                connection.execute(select(func.count()).select_from(t)).scalar_one()
                for t in SQLModel.metadata.sorted_tables
            )
        return Copied(int(games), int(rows))
    finally:
        store.close()


def restore(source: Path, url: str) -> Copied:
    """Copy the backup `source` into the empty database at `url`."""
    if not source.is_file():
        raise StoreError(f"no backup file at {source}")
    with sqlite3.connect(source) as probe:
        header = probe.execute("SELECT name FROM sqlite_master WHERE name = 'games'").fetchall()
    probe.close()
    if not header:
        raise StoreError(f"{source} is not a nomic-referee backup (no games table)")
    private_database(url)
    target = Store(url)
    try:
        target.create_schema()
        with target.engine.connect() as connection:
            games = connection.execute(select(func.count()).select_from(GameRow)).scalar_one()
            leases = connection.execute(select(func.count()).select_from(GameOwnerRow)).scalar_one()
        if games:
            raise StoreError(
                f"the database holds {games} game(s): restore only into an empty database"
            )
        if leases:
            raise StoreError("the database is leased by a running process: stop it first")
        with tempfile.TemporaryDirectory() as scratch:  # the backup itself stays as it was
            copy_path = Path(scratch) / "backup.db"
            shutil.copyfile(source, copy_path)
            copy = Store(f"sqlite:///{copy_path}")
            try:
                copy.create_schema()  # an older backup is brought to this version first
                with copy.engine.connect() as src, target.engine.begin() as out:
                    for table in SQLModel.metadata.sorted_tables:
                        if table.name not in _LEASES:
                            _copy_rows(src, out, table)
                    _settle(out)
            finally:
                copy.close()
        return _count(url)
    finally:
        target.close()


def _settle(connection: object) -> None:
    """A restored game is owned by no one, re-reads its inbox, and sends what was in flight."""
    from sqlalchemy.engine import Connection

    assert isinstance(connection, Connection)
    connection.execute(update(MailboxRow).values(uidvalidity=0, last_uid=0))
    connection.execute(
        update(OutboxRow)
        .where(OutboxRow.status == "sending")  # type: ignore[arg-type]
        .values(status="pending", claimed_by=None)
    )
    if connection.dialect.name == "postgresql":  # the id sequences go on after the copied rows
        for table in SQLModel.metadata.sorted_tables:
            if "id" in table.c and table.c.id.autoincrement in (True, "auto"):
                connection.execute(
                    text(
                        f"SELECT setval(pg_get_serial_sequence('{table.name}', 'id'), "
                        f"COALESCE((SELECT MAX(id) FROM {table.name}), 0) + 1, false)"
                    )
                )
