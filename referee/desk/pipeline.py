"""One mail through the desk, stage by stage: screen, read, look up, decide, write, answer.

`STAGES` is the desk's sequence as data: each stage is a function over the mail's `Desked`
context, and the first stage that settles the mail (a check that stops it, a mail refused
whole) ends it; the log names that stage. `screen` runs the checks of the screening (a
stranger's request or confirmation, a bounce, a refusal); `read` reads the mail once and
runs the checks of the whole mail (`checks.MAIL_CHECKS`); `look_up` reads from the store
what deciding needs (`Known`); `decide` decides line by line with no store access; `write`
writes the inbound row and the events; `answer` queues the reply and the notices.
The service opens the one unit of work the stages share, and makes the chain link after them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee.core import clock, outcomes
from referee.core.events import Outcome
from referee.core.model import GameState
from referee.desk import checks, deciding, joining, known, reading, writing
from referee.desk.answering import Desk, Receipt
from referee.desk.archiving import archive
from referee.desk.bounced import bounced
from referee.desk.hints import QUOTED, Hint
from referee.desk.known import Known
from referee.desk.letters import item
from referee.desk.logged import Shown
from referee.desk.prompts import awaited, expected, spell, thread_of
from referee.desk.reading import Said
from referee.desk.run import Run
from referee.desk.screen import Intake, screen
from referee.mail.quotes import cut_at_top
from referee.store.store import SenderDay, UnitOfWork
from referee.store.tables import InboundStatus

log = logging.getLogger("referee")
Reply = Callable[..., int]  # `Desk.reply`, or the service's hook on it


@dataclass
class Desked:
    """One mail at the desk: what the stages share, and what each has found so far."""

    desk: Desk
    work: UnitOfWork
    intake: Intake
    reply: Reply
    site: Path | None  # where ARCHIVE writes a record too large for a mail (213)
    link: tuple[int, str]  # the chain's last link and head, which ARCHIVE's answer names
    done: tuple[Receipt, GameState] | None = None  # set by the stage that settles the mail
    today: SenderDay | None = None
    said: Said | None = None
    known: Known | None = None
    run: Run | None = None
    asked: list[writing.Asked] = field(default_factory=list)  # requests made while deciding


def screening(mail: Desked) -> None:
    """The checks of the screening; a stranger's request or confirmation, a bounce."""
    desk, work, intake = mail.desk, mail.work, mail.intake
    verdict = screen(intake, work)
    if verdict is None:
        return
    if verdict.check == "player":  # not playing: a request to join, or its confirmation
        mail.done = joining.stranger(desk, work, intake)
        if mail.done is not None:
            return
    if verdict.check == "automatic" and intake.mail.bounce:
        mail.done = bounced(desk, work, intake), intake.state
    else:
        mail.done = desk.refuse(work, intake, verdict), intake.state


def read(mail: Desked) -> None:
    """Read the mail once, then the checks of the whole mail; one may refuse it whole."""
    intake, settings = mail.intake, mail.desk.settings
    mail.today = intake.today(mail.work)  # as `daily_allowance` found it
    mail.said = reading.read(intake.mail, intake.state, settings, mail.desk.letters.draft_text)
    for check in checks.MAIL_CHECKS:
        refusal = check.check(mail.said, mail.today, settings.limits)
        if refusal is not None:
            mail.done = _refused(mail, check.name, refusal), intake.state
            return


def look_up(mail: Desked) -> None:
    """What deciding needs of the store, read before it (`known.Known`)."""
    assert mail.said is not None
    intake, commands = mail.intake, [line.command for line in mail.said.lines]
    mail.known = known.look_up(mail.desk.settings, mail.work, intake.mail, intake.at, commands)


def decide(mail: Desked) -> None:
    """Every line through the checks and the engine (`deciding.decide`)."""
    desk, intake, said, known = mail.desk, mail.intake, mail.said, mail.known
    assert said is not None and known is not None
    at, message = intake.at, intake.mail
    mail.run = Run(
        message,
        at,
        intake.state,
        desk.settings,
        said,
        ask=lambda now, request: joining.ask_confirmation(
            desk, known, message, at, now, request, mail.asked
        ),
        about=known.about,
        render=desk.letters.render,
        rules_attached=desk.letters.rules_attached,
        votes=[h.meant for h in said.hinted if h.confirm],  # kept for a bare yes
    )
    deciding.decide(mail.run)


def write(mail: Desked) -> None:
    """Write once what deciding made (`writing.decided`)."""
    assert mail.run is not None
    mail.run.state = writing.decided(mail.work, mail.run, mail.asked)


def answer(mail: Desked) -> None:
    """The reply to a mail decided line by line, and the notices its decisions send."""
    desk, work, run, today = mail.desk, mail.work, mail.run, mail.today
    assert run is not None and today is not None
    message, at, said, state = run.mail, run.at, run.said, run.state
    hinted = list(said.hinted)
    items = run.items + _hint_items(hinted) + list(said.unseen) + list(said.ignored)
    unread = [h for h in hinted if not h.confirm]  # quoted back: "I did not act on these"
    if not said.lines and not run.votes:
        items.append(item("", Outcome(_no_command(desk, run, today))))
    attached = run.attached
    if run.archive is not None and (desk.letters.render or mail.site is not None):
        made, files = archive(desk.settings, work, state, mail.site, *mail.link)
        attached += files
        asked = items[run.archive]
        items[run.archive] = item(asked["line"], made, asked["meant"])
    sent = mail.reply(
        work, message, at, state, items, confirm=bool(run.votes), attached=attached, unread=unread
    )
    sent += desk.emit(work, run.effects, at, state, inbound=message.dedupe_key)
    refused = sum(1 for i in items if not i["ok"])
    receipt = Receipt(message.message_id, InboundStatus.PROCESSED, len(said.lines), refused, sent)
    mail.done = receipt, state


Stage = Callable[[Desked], None]
STAGES: tuple[tuple[str, Stage], ...] = (
    ("screen", screening),
    ("read", read),
    ("look_up", look_up),
    ("decide", decide),
    ("write", write),
    ("answer", answer),
)


def handle(mail: Desked) -> tuple[Receipt, GameState]:
    """The mail through `STAGES`, until one settles it."""
    for name, stage in STAGES:
        stage(mail)
        if mail.done is not None:
            log.debug("mail %s: settled at the desk's %s", Shown(mail.intake.mail.message_id), name)
            return mail.done
    raise AssertionError("no stage settled the mail")  # `answer` always does


def _refused(mail: Desked, check: str, refusal: checks.MailRefusal) -> Receipt:
    """Record and answer a mail a check of `checks.MAIL_CHECKS` refused whole."""
    work, message, at = mail.work, mail.intake.mail, mail.intake.at
    writing.refused(work, message, at, refusal)
    sent = 0
    if refusal.items is not None:  # None: a loop, no longer answered
        sent = mail.reply(work, message, at, mail.intake.state, list(refusal.items))
    if refusal.warning:
        log.warning("mail %s: %s", Shown(message.message_id), refusal.warning)
    log.info("mail %s: refused by %s", Shown(message.message_id), check)
    return Receipt(message.message_id, InboundStatus.REFUSED, 0, refusal.refused, sent)


def _no_command(desk: Desk, run: Run, today: SenderDay) -> outcomes.NoCommand:
    """The answer to a mail with no command: the one it seems to mean, or the ones the
    game awaits of its sender, and when the day's answers to such mail run out."""
    mail, state, at = run.mail, run.state, run.at
    language, limits = desk.settings.game.language, desk.settings.limits
    thread = thread_of(mail.references, mail.in_reply_to, desk.settings.game.key)
    guess = expected(state, mail.sender, thread, mail.own_words)
    waited = awaited(state, mail.sender, thread, language) if guess is None else []
    hint = spell(guess, language) if guess is not None else next(iter(waited), "")
    other = waited[1] if len(waited) > 1 else ""
    last = today.empty + 1 >= limits.empty_replies_per_day
    upto = clock.tomorrow(at) if last else None
    cut, cut_at = cut_at_top(mail.body)
    return outcomes.NoCommand(hint=hint, other=other, next=upto, cut=cut, cut_line=cut_at)


def _hint_items(hinted: Sequence[Hint]) -> list[dict[str, Any]]:
    """The lines no command took that read as a whole command (a vote in plain words, a
    misspelt keyword put right), each with the command it seems to mean, done on a bare yes."""
    meant = [h for h in hinted if h.confirm][:QUOTED]
    return [item(h.line, Outcome(outcomes.ConfirmNeeded(meant=h.meant))) for h in meant]
