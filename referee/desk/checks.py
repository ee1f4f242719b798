"""The named checks of a player's mail, as data: where a mail or a line is refused (112, 205, 212).

Three tables, in the order the desk runs them; each check is a name and a function, and the
log names the check behind each refusal (the mail the player gets does not change):

- `MAIL_CHECKS` refuse a whole mail after it was read (too many commands, its text and HTML
  parts disagreeing on every command, a loop of mails that carry none);
- `LINE_CHECKS` answer one line before the engine sees it (two answers to one question, a line
  that does not parse, a request confirmed by reply, a question already answered, debate over
  its caps, a copy of the referee's own mail);
- `AFTER_CHECKS` hold back a line the engine decided (the reply's answers too long, too many
  mails caused by one mail).

A new check is a function and one row in its table.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from referee.config import LimitsConfig, Settings
from referee.core import outcomes
from referee.core.debate import relayed_since
from referee.core.events import AskToJoin, Debate, MoveAddress, Outcome, Query, Reason
from referee.core.step import DAY
from referee.desk.echoes import normalise, referee_thread
from referee.desk.hints import corrected
from referee.desk.letters import cut_line, fact, item
from referee.desk.logged import Shown
from referee.desk.reading import Said
from referee.desk.run import Run
from referee.mail import outgoing
from referee.mail.commands import ParsedLine, torn
from referee.mail.parse import InboundMail
from referee.store.store import SenderDay

_OPENS_APPEAL = ("appeal", "accuse")
log = logging.getLogger("referee")


@dataclass(frozen=True)
class MailRefusal:
    """A whole mail refused: the note of its inbound row, how many commands it counts, the
    reply's lines (None: no reply, a loop is not answered), the decisions kept for an APPEAL
    in reply, how many lines were refused, and a warning for the log ("" for none)."""

    note: str
    counted: int = 0
    items: tuple[dict[str, Any], ...] | None = ()
    facts: tuple[dict[str, Any], ...] = ()
    refused: int = 1
    warning: str = ""


@dataclass(frozen=True)
class MailCheck:
    name: str
    check: Callable[[Said, SenderDay, LimitsConfig], MailRefusal | None]


@dataclass(frozen=True)
class LineCheck:
    """A check of one line before the engine; `kept`: its answer is kept for an APPEAL."""

    name: str
    check: Callable[[Run, int, ParsedLine], Outcome | None]
    kept: bool = False


@dataclass
class After:
    """What the engine decided of a line, as the after-checks see (and may change) it."""

    outcome: Outcome
    mails: int  # the notices' recipients


@dataclass(frozen=True)
class AfterCheck:
    name: str
    check: Callable[[Run, After, ParsedLine], Outcome | None]
    kept: bool = False


# ----- the whole mail -----------------------------------------------------------------------


def too_many(said: Said, today: SenderDay, limits: LimitsConfig) -> MailRefusal | None:
    """A mail asking more than one mail may: refused whole, with the limit it broke."""
    written = said.written
    appeals = sum(1 for p in written if p.spec.name in _OPENS_APPEAL)
    refusal: Outcome | None = None
    if appeals > limits.appeals_per_mail:
        refusal = Outcome(outcomes.TooManyAppeals(count=appeals, limit=limits.appeals_per_mail))
    elif len(written) > limits.commands_per_mail:
        limit = limits.commands_per_mail
        refusal = Outcome(outcomes.TooManyCommands(count=len(written), limit=limit))
    elif today.commands + len(written) > limits.commands_per_day:
        refusal = Outcome(outcomes.DailyLimit(what="commands", limit=limits.commands_per_day))
    if refusal is None:
        return None
    facts = tuple(fact(p, refusal) for p in written)
    return MailRefusal(refusal.code, len(written), (item("", refusal),), facts)


def parts_disagree(said: Said, today: SenderDay, limits: LimitsConfig) -> MailRefusal | None:
    """Every command disagreed between the text and the HTML part: say so, read nothing else."""
    if not said.unseen or said.written:
        return None
    items = said.unseen + said.ignored
    warning = "its text and HTML parts disagree"
    return MailRefusal(Reason.PARTS_DISAGREE.value, 0, items, (), len(said.unseen), warning)


def endless(said: Said, today: SenderDay, limits: LimitsConfig) -> MailRefusal | None:
    """The day's replies to mail with no command are spent: a loop, stop answering."""
    if said.lines or any(h.confirm for h in said.hinted):
        return None
    if today.empty < limits.empty_replies_per_day:
        return None
    return MailRefusal(Reason.NO_COMMAND.value, items=None)


MAIL_CHECKS: tuple[MailCheck, ...] = (
    MailCheck("too_many", too_many),
    MailCheck("parts_disagree", parts_disagree),
    MailCheck("endless", endless),
)


# ----- one line, before the engine ------------------------------------------------------------


def contradicted(run: Run) -> dict[int, str]:
    """The lines that give a second answer to a question another line answered too."""
    echoes = run.said.echoes
    return torn(
        list(run.said.lines),
        lambda p: (
            bool(echoes) and not isinstance(p.command, Debate) and normalise(p.line) in echoes
        ),
    )


def two_answers(run: Run, index: int, line: ParsedLine) -> Outcome | None:
    """Two answers to one question: never chosen by order."""
    if index not in run.contradicted:
        return None
    return Outcome(outcomes.TwoAnswers(other=cut_line(run.contradicted[index])))


def syntax(run: Run, index: int, line: ParsedLine) -> Outcome | None:
    """A line that starts like a command but is not its syntax; put right ("VOTE 301 YSE"),
    it is done on a bare yes."""
    if line.command is not None:
        return None
    form = line.spec.syntax(run.settings.game.language)
    hint = corrected(line.line, line.spec.name, run.mail.sender)
    if hint:
        run.votes.append(hint)
        return Outcome(outcomes.ConfirmNeeded(meant=hint, form=form))
    return Outcome(outcomes.Syntax(syntax=form, problem=line.problem))


def by_reply(run: Run, index: int, line: ParsedLine) -> Outcome | None:
    """A request to join or to move: checked now, confirmed by a reply to its address."""
    if not isinstance(line.command, AskToJoin | MoveAddress):
        return None
    return run.ask(run.state, line.command)


def asked_again(run: Run, index: int, line: ParsedLine) -> Outcome | None:
    """50 x RULES: one ruleset, not fifty."""
    if not isinstance(line.command, Query):
        return None
    question = (line.command.what, line.command.number, line.command.ref)
    if question in run.questions:
        return Outcome(outcomes.QueryRepeated())
    run.questions.add(question)
    return None


def debate_cap(run: Run, index: int, line: ParsedLine) -> Outcome | None:
    """112: words too long for the table, or an author past the day's relays."""
    debate = line.command
    if not isinstance(debate, Debate):
        return None
    limits = run.settings.limits
    if len(debate.text) > limits.debate_chars:
        length, limit = f"{len(debate.text):,}", f"{limits.debate_chars:,}"
        return Outcome(outcomes.DebateTooLong(length=length, limit=limit))
    day = datetime.combine(run.at.date(), datetime.min.time(), tzinfo=UTC)
    if relayed_since(run.state, debate.sender, day) >= limits.debates_per_day:
        return Outcome(outcomes.DebateDailyLimit(limit=limits.debates_per_day, next=day + DAY))
    return None


def echo(run: Run, index: int, line: ParsedLine) -> Outcome | None:
    """A command line of the referee's own mail, copied back: never obeyed."""
    echoes = run.said.echoes
    if isinstance(line.command, Debate) or not echoes or normalise(line.line) not in echoes:
        return None
    log_echo(run.mail, line)
    return Outcome(outcomes.QuotedNotice(where=echoes_where(run.mail, run.settings)))


# The order is the policy: a copy of the referee's own words is refused before a request
# confirmed by reply is asked, so a move planted in a proposal's text never mails its address.
LINE_CHECKS: tuple[LineCheck, ...] = (
    LineCheck("two_answers", two_answers, kept=True),
    LineCheck("syntax", syntax),
    LineCheck("echo", echo, kept=True),
    LineCheck("by_reply", by_reply),
    LineCheck("asked_again", asked_again),
    LineCheck("debate_cap", debate_cap),
)


# ----- one line, after the engine -------------------------------------------------------------


def answers_full(run: Run, after: After, line: ParsedLine) -> Outcome | None:
    """The reply's answers to questions are bounded; RULES past its length is attached."""
    outcome, limits = after.outcome, run.settings.limits
    if not isinstance(line.command, Query) or not outcome.ok:
        return None
    size = len(repr(outcome.data))  # the answer's text, near enough
    if run.answer_size and run.answer_size + size > limits.answer_chars:
        return Outcome(outcomes.AnswersFull(limit=f"{limits.answer_chars:,}"))
    run.answer_size += size
    if isinstance(outcome.payload, outcomes.Rules) and run.render:
        after.outcome, files = run.rules_attached(outcome.payload)
        run.attached += files
    return None


def too_many_mails(run: Run, after: After, line: ParsedLine) -> Outcome | None:
    """One mail may cause at most `[limits] mails_per_mail` mails (205)."""
    limit = run.settings.limits.mails_per_mail
    if run.queued + after.mails > limit:
        return Outcome(outcomes.TooManyMails(queued=run.queued, limit=limit))
    return None


AFTER_CHECKS: tuple[AfterCheck, ...] = (
    AfterCheck("answers_full", answers_full),
    AfterCheck("too_many_mails", too_many_mails, kept=True),
)


def echoes_where(mail: InboundMail, settings: Settings) -> str:
    """The referee's mail a copied line comes from, as the reply names it."""
    game = settings.game
    slug, domain = game.key, outgoing.domain_of(game.address)
    thread = referee_thread(mail.references, mail.in_reply_to, slug, domain)
    return thread.replace("-", " ") if thread else "the game's texts"


def log_echo(mail: InboundMail, line: ParsedLine) -> None:
    """Warn the operator: a player's mail repeats the referee's (a client that quotes badly)."""
    log.warning("mail %s: %r repeats the referee's mail", Shown(mail.message_id), line.line[:80])
