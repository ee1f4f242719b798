"""The desk: a player's mail read, decided, written and answered, stage by stage (107-215).

Between the pure engine (`referee/core/`) and the edges (`referee/mail/`, `referee/store/`):
the screening of a mail, the reading of a player's words (prompts, confirmations, debate,
hints, echoes of the referee's own mail, bounces) and the replies. `docs/architecture.md`
says where a mail goes and where a new command or check is added.
"""
