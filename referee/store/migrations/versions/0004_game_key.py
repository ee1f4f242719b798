"""A game's stable key (`[game] id`), apart from its display name (rules 105, 213).

Revision ID: 0004
Revises: 0003 (game owners)

Before, a game was found by its display name, so fixing a typo in `[game] name` lost the game.
Each existing game gets the key its name made into a slug (`Nomic of the King` ->
`nomic-of-the-king`), the key its Message-IDs already carry; a clash gets the row's id appended.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlmodel.sql.sqltypes import AutoString

from referee.config import slug

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain ADD COLUMN (no table rebuild: on SQLite that would break the foreign keys of
    # every row that names the game); the empty default is replaced below, row by row.
    op.add_column("games", sa.Column("key", AutoString(), nullable=False, server_default=""))
    connection = op.get_bind()
    taken: set[str] = set()
    for game_id, name in connection.execute(sa.text("SELECT id, name FROM games ORDER BY id")):
        key = slug(name)
        if key in taken:
            key = f"{key}-{game_id}"
        taken.add(key)
        connection.execute(
            sa.text("UPDATE games SET key = :key WHERE id = :id"), {"key": key, "id": game_id}
        )
    op.create_index("ix_games_key", "games", ["key"], unique=True)


def downgrade() -> None:
    op.drop_index("ix_games_key", table_name="games")
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.drop_column("key")
