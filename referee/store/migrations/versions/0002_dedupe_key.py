"""Inbound mail keyed by sender, Message-ID and body digest; the Message-ID itself unindexed.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30 12:00:00

Before, `inbound` was unique on (game, Message-ID): whoever sent first a mail with the
Message-ID a player would use made that player's real mail a silent duplicate, and a Message-ID
of a few kB broke PostgreSQL's btree row limit. Now the unique key is a SHA-256 digest
(`dedupe_key`) of the sender, the Message-ID and the body; the Message-ID is kept as written in
a Text column without an index. Rows from before get the digest of (sender, Message-ID, no
body), which `UnitOfWork.seen` still recognises, so mail redelivered after the upgrade is not
applied twice. `commands` counts the commands of each mail for the per-sender daily limit.
The table is rebuilt (the old unique constraint has no name to drop on SQLite).
"""

from __future__ import annotations

import hashlib

import sqlalchemy as sa
from alembic import op
from sqlmodel.sql.sqltypes import AutoString, UTCDateTime

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def _legacy_key(sender: str, message_id: str) -> str:
    text = "\x00".join((sender, message_id, ""))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def upgrade() -> None:
    op.create_table(
        "inbound_v2",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("dedupe_key", sa.String(length=64), nullable=False),
        sa.Column("message_id", sa.Text(), nullable=False),
        sa.Column("sender", AutoString(), nullable=False),
        sa.Column("received_at", UTCDateTime(), nullable=False),
        sa.Column("status", AutoString(), nullable=False),
        sa.Column("note", AutoString(), nullable=False),
        sa.Column("commands", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("game_id", "dedupe_key"),
    )
    connection = op.get_bind()
    # Copy the rows as they are stored, then give each its key (computed here, in Python).
    connection.execute(
        sa.text(
            "INSERT INTO inbound_v2 (id, game_id, dedupe_key, message_id, sender, received_at,"
            " status, note, commands) SELECT id, game_id, 'legacy-' || id, message_id, sender,"
            " received_at, status, note, 0 FROM inbound"
        )
    )
    rows = connection.execute(sa.text("SELECT id, sender, message_id FROM inbound_v2")).all()
    if rows:
        connection.execute(
            sa.text("UPDATE inbound_v2 SET dedupe_key = :key WHERE id = :id"),
            [
                {"key": _legacy_key(sender, message_id), "id": id_}
                for id_, sender, message_id in rows
            ],
        )
    op.drop_table("inbound")
    op.rename_table("inbound_v2", "inbound")
    if connection.dialect.name == "postgresql":  # keep the sequence behind the copied ids
        connection.execute(
            sa.text(
                "SELECT setval(pg_get_serial_sequence('inbound', 'id'), "
                "COALESCE((SELECT MAX(id) FROM inbound), 0) + 1, false)"
            )
        )
    op.create_index("ix_inbound_game_id", "inbound", ["game_id"], unique=False)
    op.create_index(
        "ix_inbound_sender_day", "inbound", ["game_id", "sender", "received_at"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_inbound_sender_day", table_name="inbound")
    with op.batch_alter_table("inbound", recreate="always") as batch:
        batch.drop_column("dedupe_key")
        batch.drop_column("commands")
        batch.alter_column("message_id", type_=AutoString(), existing_nullable=False)
        batch.create_unique_constraint("uq_inbound_game_message", ["game_id", "message_id"])
