"""A bounce of the referee's own mail: never obeyed nor answered; the King is told (205).

When a bounce returns a mail the referee sent to a player, the King, or `[game] operator`,
is told, once per player and day, with none of the bounce's words (`bounces.read_bounce`
reads only its Message-IDs and status); a bounce of such a notice tells no one (no loops).
"""

from __future__ import annotations

import logging
from datetime import datetime

from referee.core.model import GameState
from referee.desk import bounces, letters, writing
from referee.desk.answering import Desk, Receipt
from referee.desk.letters import BOUNCE_NOTICE
from referee.desk.logged import Shown, redact
from referee.desk.screen import Intake
from referee.store.store import SentMail, UnitOfWork
from referee.store.tables import InboundStatus

log = logging.getLogger("referee")


def bounced(desk: Desk, work: UnitOfWork, intake: Intake) -> Receipt:
    """Record a bounce, and tell the King (or the operator) of the mail it returns."""
    mail, at, state = intake.mail, intake.at, intake.state
    report = bounces.read_bounce(intake.raw)
    returned = next(iter(work.sent_mail(report.message_ids)), None)
    note, sent = "bounce", 0
    if returned is None:
        note = "bounce: of no mail the referee sent"
    elif not report.failed:
        note = f"bounce: a report, not a failure, of {returned.kind}"
    elif returned.kind == BOUNCE_NOTICE:
        note = "bounce: of a notice of a bounce; no one is told (no loops)"
    elif state.player(returned.recipient) is None:
        note = f"bounce: of {returned.kind} to someone not playing"
    else:
        note = f"bounce: of {returned.kind} to {redact(returned.recipient)}"
        sent = tell_of_bounce(desk, work, at, state, returned, report.status)
    work.record_inbound(mail, at, InboundStatus.IGNORED, note)
    log.warning("mail %s: %s%s", Shown(mail.message_id), note, "; told" if sent else "")
    return Receipt(mail.message_id, InboundStatus.IGNORED, 0, 0, sent)


def tell_of_bounce(
    desk: Desk, work: UnitOfWork, at: datetime, state: GameState, returned: SentMail, status: str
) -> int:
    """The notice of a bounced mail, to the operator or the King: once per player a day
    (its Message-ID names the player and the day, and the outbox has each id once)."""
    message_id = letters.bounce_message_id(desk.settings, at, returned.recipient)
    if work.sent_mail([message_id]):
        return 0  # told today already
    notice = desk.letters.bounce_notice(at, state, returned, status, message_id)
    return writing.post(work, [notice], at)
