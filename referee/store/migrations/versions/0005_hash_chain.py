"""The hash chain: every inbound message as received, and one link per mail or deadline (213).

Revision ID: 0005
Revises: 0004 (the game key)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlmodel.sql.sqltypes import AutoString, UTCDateTime

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "chain",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("kind", AutoString(), nullable=False),
        sa.Column("at", UTCDateTime(), nullable=False),
        sa.Column("raw", sa.LargeBinary(), nullable=True),
        sa.Column("record", sa.Text(), nullable=False),
        sa.Column("head", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("game_id", "seq"),
    )
    with op.batch_alter_table("chain", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_chain_game_id"), ["game_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("chain", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_chain_game_id"))
    op.drop_table("chain")
