"""When each inbound mail was delivered, beside when it took effect (issue 15; rules 203, 213).

Revision ID: 0008
Revises: 0007 (inbound mail by its key)

`inbound.received_at` is the time a mail took effect. A mail delivered before a later event was
logged (a deadline fired, another mail applied) but read only after it takes effect at that
event's time; `delivered_at` keeps the time it was delivered. Rows written before this column
existed keep it empty: their delivery time was never kept, and is not guessed.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlmodel.sql.sqltypes import UTCDateTime

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain ADD COLUMN (no table rebuild: on SQLite that would break the foreign keys of
    # every row that names the game).
    op.add_column("inbound", sa.Column("delivered_at", UTCDateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("inbound", schema=None) as batch_op:
        batch_op.drop_column("delivered_at")
