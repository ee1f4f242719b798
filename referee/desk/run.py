"""One mail's decisions so far, threaded from line to line (`deciding.decide`, `checks`).

A `Run` is the context the checks and the engine share while the desk decides a mail: the
state as the lines before left it, the reply's lines, the events to log, the notices, and
the counts the limits bound. It holds no store: what deciding needs of it is read before
(`known.Known`), and a request confirmed by reply (`Asking`) is only made here, written after.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from referee.config import Settings
from referee.core.events import AskToJoin, Effect, MoveAddress, OpenAppeal, Outcome
from referee.core.model import GameState
from referee.desk.reading import Said
from referee.mail import outgoing
from referee.mail.parse import InboundMail

Asking = Callable[[GameState, AskToJoin | MoveAddress], Outcome]  # a request confirmed by reply
About = Callable[[OpenAppeal], OpenAppeal]  # an APPEAL in reply to an answer: about its decision


@dataclass
class Run:
    """One mail's decisions so far, threaded from line to line."""

    mail: InboundMail
    at: datetime
    state: GameState
    settings: Settings
    said: Said
    ask: Asking
    about: About
    render: bool
    rules_attached: Callable[[Any], tuple[Outcome, tuple[outgoing.Attachment, ...]]]
    contradicted: dict[int, str] = field(default_factory=dict)
    votes: list[str] = field(default_factory=list)  # kept for a bare yes
    items: list[dict[str, Any]] = field(default_factory=list)  # the reply's lines
    facts: list[dict[str, Any]] = field(default_factory=list)  # kept for an APPEAL (212)
    effects: list[Effect] = field(default_factory=list)  # the notices to send
    events: list[dict[str, Any]] = field(default_factory=list)  # to log, in order
    questions: set[tuple[object, ...]] = field(default_factory=set)  # answered in this reply
    answer_size: int = 0  # characters of answers to questions in this reply
    queued: int = 1  # the reply, and the notices so far
    attached: tuple[outgoing.Attachment, ...] = ()  # the files the reply carries
    archive: int | None = None  # the reply's item that asked for ARCHIVE (213)
