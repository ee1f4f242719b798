"""One owner per game: the game lease, the live workers, and outbox claims (rules 205, 212).

Revision ID: 0003
Revises: 0002 (sender's dedupe key)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlmodel.sql.sqltypes import AutoString, UTCDateTime

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "game_owners",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("owner", AutoString(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["game_id"], ["games.id"]),
        sa.PrimaryKeyConstraint("game_id"),
    )
    op.create_table(
        "workers",
        sa.Column("name", AutoString(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.add_column(sa.Column("claimed_by", AutoString(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("outbox", schema=None) as batch_op:
        batch_op.drop_column("claimed_by")
    op.drop_table("workers")
    op.drop_table("game_owners")
