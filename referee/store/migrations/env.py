"""Alembic environment: migrates the connection the referee hands over (rules 205, 213)."""

from __future__ import annotations

from alembic import context
from sqlmodel import SQLModel

from referee.store import tables  # noqa: F401  (registers the tables on the metadata)

config = context.config
target_metadata = SQLModel.metadata


def run() -> None:
    connection = config.attributes.get("connection")
    if connection is None:
        raise RuntimeError("run migrations through referee.store.store.Store.create_schema")
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


run()
