"""nomic-referee: referees the game Nomic by email (rules 101-215 of the seed ruleset)."""

__version__ = "0.2.0"
