"""Requests waiting for their address to confirm them by reply: to join, to move (rule 201).

Revision ID: 0006
Revises: 0005 (hash chain)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlmodel.sql.sqltypes import AutoString, UTCDateTime

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "confirmations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("token", AutoString(), nullable=False),
        sa.Column("kind", AutoString(), nullable=False),
        sa.Column("address", AutoString(), nullable=False),
        sa.Column("name", AutoString(), nullable=False),
        sa.Column("old", AutoString(), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("day", AutoString(), nullable=False),
        sa.Column("status", AutoString(), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("game_id", "token"),
    )
    with op.batch_alter_table("confirmations", schema=None) as batch_op:
        batch_op.create_index("ix_confirmations_address", ["game_id", "address"], unique=False)
        batch_op.create_index(batch_op.f("ix_confirmations_game_id"), ["game_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("confirmations", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_confirmations_game_id"))
        batch_op.drop_index("ix_confirmations_address")
    op.drop_table("confirmations")
