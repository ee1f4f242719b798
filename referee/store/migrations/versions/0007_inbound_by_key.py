"""Inbound mail found by its dedupe key in any game: a mail acts in one game only (issue 15).

Revision ID: 0007
Revises: 0006 (confirmations)
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("inbound", schema=None) as batch_op:
        batch_op.create_index("ix_inbound_dedupe_key", ["dedupe_key"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("inbound", schema=None) as batch_op:
        batch_op.drop_index("ix_inbound_dedupe_key")
