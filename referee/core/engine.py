"""The rules engine: `decide(state, event, now) -> Decision(state, effects)`, rules 101-215.

Pure: no clock, no I/O. Time enters as the `now` of each event; deadlines are fired by Tick
events that the caller sends at `next_deadline(state)`. A refused command is an Outcome with a
reason code, never an exception. This module is the engine's public face; the code lives by
concern, each module over the step context of `step`:

| rules | where |
|---|---|
| who may do what, when (every command) | `procedure` (the legality table) |
| 101, 114 (leaving), queries, the King's parameter answers | `machine` (`decide`, `start_game`) |
| 103, 107, 109, 112 (proposing, circulating, revising, extending) | `proposals` |
| 103, 108-111, 115, 207, 210, 211 (checking and adopting a change) | `adoption` |
| 203, 204, 206, 208, 110 (votes, the close, the dissent bonus) | `voting` |
| 201, 202, 204, 209 (turns, rounds, the award, winning, the tie) | `turns` |
| 212, 213, 214, 215 (appeals, Champions, deposition, the crown) | `appeals` |
| 201, 203 (who joins, from which round and proposal; who moves address) | `roster` |
| 112, 202, 203, 213 deadlines and reminders | `clock` |
| 205 (what one step changed in rules and scores) | `changes` |
"""

from __future__ import annotations

from referee.core.clock import next_deadline
from referee.core.machine import decide, start_game
from referee.core.step import Decision, Refusal, find_player

__all__ = ["Decision", "Refusal", "decide", "find_player", "next_deadline", "start_game"]
