"""The desk's answers to one mail: the reply, the notices, a mail the screening stopped (205, 212).

A `Desk` is what every stage of the desk shares about the game beside the store: its
settings, the letters it writes, the DNS its checks of signatures ask. It queues the one
reply to a mail (`reply`), the notices its decisions send (`emit`), and records and answers
a mail a check of the screening stopped (`refuse`). A `Receipt` is what became of the mail.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from referee.config import Settings
from referee.core.events import Effect
from referee.core.model import GameState
from referee.desk import writing
from referee.desk.hints import Hint
from referee.desk.letters import Letters, item
from referee.desk.logged import Redacted, Shown
from referee.desk.screen import Answer, Intake, Verdict
from referee.mail import outgoing
from referee.mail.auth import DnsLookup
from referee.mail.parse import InboundMail
from referee.store.store import UnitOfWork
from referee.store.tables import InboundStatus

log = logging.getLogger("referee")
STOPPED = "mail %s claiming to be from %s stopped by %s"  # the log line of a mail screened out


@dataclass(frozen=True)
class Receipt:
    """What became of one inbound message, for the log and the caller."""

    message_id: str
    status: InboundStatus
    commands: int = 0
    refused: int = 0
    sent: int = 0


@dataclass(frozen=True)
class Desk:
    """What the desk's stages share beside the store: the game's settings, its letters, DNS."""

    settings: Settings
    letters: Letters
    dns: DnsLookup | None = None  # DKIM key lookups; None: the system's DNS

    def reply(
        self,
        work: UnitOfWork,
        mail: InboundMail,
        at: datetime,
        state: GameState,
        items: list[dict[str, Any]],
        confirm: bool = False,
        attached: tuple[outgoing.Attachment, ...] = (),
        unread: Sequence[Hint] = (),
    ) -> int:
        """Queue the one reply to `mail` (`Letters.reply`)."""
        late = writing.late(work, at, state)
        made = self.letters.reply(mail, at, state, items, late, confirm, attached, unread)
        return writing.post(work, [made], at)

    def emit(
        self,
        work: UnitOfWork,
        effects: Sequence[Effect],
        at: datetime,
        state: GameState,
        inbound: str | None,
    ) -> int:
        """Queue the notices among `effects`, one mail per recipient (`Letters.notices`)."""
        return writing.post(work, self.letters.notices(effects, at, state, inbound), at)

    def refuse(self, work: UnitOfWork, intake: Intake, verdict: Verdict) -> Receipt:
        """Record a mail the screening stopped, and answer it as the check says."""
        mail, at = intake.mail, intake.at
        work.record_inbound(mail, at, verdict.status, verdict.note)
        if not verdict.believed or verdict.status is not InboundStatus.IGNORED:
            log.warning(
                STOPPED,
                Shown(mail.message_id),
                Redacted(mail.sender) if mail.sender else "nobody",
                Shown(verdict.stopped),
            )
        sent = 0
        day = at.date().isoformat()
        notes = self.settings.limits.stranger_notes_per_day
        if verdict.check == "header_length":  # the reply never carries the over-long subject
            mail = replace(mail, subject="")
        if verdict.answer is Answer.REPLY and verdict.outcome is not None:
            sent = self.reply(work, mail, at, intake.state, [item("", verdict.outcome)])
        elif verdict.answer is Answer.STRANGER:
            if work.first_note_today(mail.sender, day, notes):
                sent = writing.post(work, [self.letters.note(mail, at, "stranger")], at)
        elif verdict.answer is Answer.NOTE and work.first_note_today(mail.sender, day, notes):
            sent = writing.post(work, [self.letters.note(mail, at, "unbelieved")], at)
        refused = 0 if verdict.status in (InboundStatus.IGNORED, InboundStatus.STRANGER) else 1
        return Receipt(mail.message_id, verdict.status, 0, refused, sent)
