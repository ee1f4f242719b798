"""Persistence: tables, the unit of work and the event log (205, 213)."""
