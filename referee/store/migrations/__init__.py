"""Alembic migrations of the referee's tables (rules 205, 213: the record of the game)."""
