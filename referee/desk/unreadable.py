"""The sender of a mail that cannot be read is told it was not read, and why (205, 213).

Its headers alone say who sent it. A player the receiving server vouches for (or any player
while `[auth] required` is off) is answered in the mail's thread, at most once a day: send it
again as plain text. Anyone else, or a player whose mail could only be shown to be his by a
DKIM signature checked here (its verdict would be in no link of the chain, so `verify` could
not decide it the same way once the key has left the DNS), gets at most the day's short note
that strangers get, within the day's cap on them. Machines (bounces, auto-replies, the game's
own address) and mail with no single sender are told nothing. No word of the mail is quoted,
nothing in it is obeyed, and it makes no link of its own: the unit names the game's last.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime

from referee.core.model import GameState
from referee.desk import writing
from referee.desk.answering import Desk
from referee.desk.logged import Redacted, Shown
from referee.mail import intake, outgoing
from referee.mail.auth import authenticate
from referee.mail.parse import InboundMail, parse_message
from referee.store.store import UnitOfWork

log = logging.getLogger("referee")


def sender_to_tell(desk: Desk, raw: bytes) -> InboundMail | None:
    """The mail's headers, when they name one sender to tell; None: no one is told."""
    try:
        mail = parse_message(raw, headers_only=True)
    except Exception:  # not even its headers: no one to tell
        return None
    game = desk.settings.game
    if not mail.sender or mail.bounce or mail.automatic or mail.sender in game.addresses:
        return None
    return mail


def tell(
    desk: Desk,
    work: UnitOfWork,
    raw: bytes,
    mail: InboundMail,
    at: datetime,
    problem: intake.Unreadable,
    state: GameState,
    link: tuple[int, str],
) -> None:
    """Queue the answer or the short note, unless the sender was told today already."""
    game = desk.settings.game
    player = state.player(mail.sender)
    believed = player is not None and vouched(desk, raw, mail.sender)
    kind = "unreadable" if believed else "unreadable_note"
    day = at.date().isoformat()
    mid = outgoing.message_id(game.key, game.address, kind, mail.sender, day)
    if believed:
        if work.sent_mail([mid]):
            return  # told today already
    elif not work.first_note_today(mail.sender, day, desk.settings.limits.stranger_notes_per_day):
        return
    work.name_link(*link)
    log.info(
        "mail %s from %s: unreadable (%s); %s",
        Shown(mail.message_id),
        Redacted(mail.sender),
        problem.reason.value,
        "answered" if believed else "the short note sent",
    )
    told = desk.letters.unreadable(mail, at, problem, player if believed else None, mid)
    writing.post(work, [told], at)


def vouched(desk: Desk, raw: bytes, sender: str) -> bool:
    """Whether a mail that cannot be read is believed to be its sender's: `[auth] required`
    off, or the receiving server's Authentication-Results (read from the headers); never a
    DKIM signature checked here."""
    auth = replace(desk.settings.auth, verify_dkim=False)
    try:
        return authenticate(raw, sender, auth, desk.dns).ok
    except Exception:  # the headers defeat the check: not shown to be his
        return False
