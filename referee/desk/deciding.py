"""Deciding a player's mail line by line: the named checks, then the engine (107, 112, 205, 212).

`decide` goes through the lines of a `Said` in order, threading the state: each line passes
the checks of `checks.LINE_CHECKS` (the first that answers it stops it, and the log names that
check), then the engine decides it, then the checks of `checks.AFTER_CHECKS` may still hold its
effects back (too long an answer, too many mails). What it decides is kept in the `Run`: the
events to log, the lines of the reply, the decisions kept for an APPEAL in reply, the notices.
It writes nothing and reads no store: an APPEAL's answer and the requests waiting were read
before it (`known.Known`), and a request confirmed by reply is written after it
(`writing.decided`).
"""

from __future__ import annotations

import logging
from dataclasses import replace

from referee.core import codec, engine
from referee.core.engine import Decision
from referee.core.events import (
    Accuse,
    ArchiveRequest,
    Command,
    Debate,
    Notice,
    OpenAppeal,
    Outcome,
)
from referee.desk import checks
from referee.desk.letters import fact, item, recipients_of
from referee.desk.logged import Shown
from referee.desk.run import Run
from referee.mail.commands import ParsedLine

log = logging.getLogger("referee")


def decide(run: Run) -> None:
    """Every line of the mail, in order, through the checks and the engine."""
    run.contradicted = checks.contradicted(run)
    for index, line in enumerate(run.said.lines):
        stopped = _checked(run, index, line, checks.LINE_CHECKS)
        if stopped is None:
            _decided(run, line)


def _checked(
    run: Run, index: int, line: ParsedLine, table: tuple[checks.LineCheck, ...]
) -> Outcome | None:
    """The answer of the first check of `table` that stops the line, written in the reply."""
    for check in table:
        outcome = check.check(run, index, line)
        if outcome is None:
            continue
        run.items.append(item(line.line, outcome))
        if check.kept:
            run.facts.append(fact(line, outcome))
        if not outcome.ok:
            log.info(
                "mail %s: %s stopped by %s", Shown(run.mail.message_id), line.spec.name, check.name
            )
        return outcome
    return None


def _decided(run: Run, line: ParsedLine) -> None:
    """The engine's decision of one line, kept unless an after-check holds it back."""
    limits = run.settings.limits
    assert line.command is not None  # the syntax check stopped every line without one
    command: Command = line.command
    if isinstance(command, OpenAppeal):  # in reply to an answer: about its decision
        command = run.about(command)
    if isinstance(command, OpenAppeal | Accuse):  # 212: beyond the day's, they wait
        command = replace(command, per_day=limits.appeals_per_day, may_wait=limits.appeals_waiting)
    decision = engine.decide(run.state, command, run.at)
    outcome, notices = split(decision)
    mails = sum(len(recipients_of(decision.state, n.to)) for n in notices)
    after = checks.After(outcome, mails)
    for check in checks.AFTER_CHECKS:
        held = check.check(run, after, line)
        if held is not None:
            run.items.append(item(line.line, held))
            if check.kept:
                run.facts.append(fact(line, held))
            log.info(
                "mail %s: %s held by %s", Shown(run.mail.message_id), line.spec.name, check.name
            )
            return
    outcome = after.outcome
    run.queued += after.mails
    payload = codec.event_to_data(command)
    run.events.append(payload)
    run.state = decision.state
    log.info(
        "mail %s: %s -> %s%s",
        Shown(run.mail.message_id),
        line.spec.name,
        outcome.code,
        "" if outcome.ok else " (refused)",
    )
    run.items.append(item(line.line, outcome, line.meant))
    if not isinstance(line.command, Debate):
        run.facts.append(fact(line, outcome, payload if command is line.command else None))
    run.effects.extend(notices)
    if any(isinstance(e, ArchiveRequest) for e in decision.effects):
        run.archive = len(run.items) - 1


def _stopped(run: Run, line: ParsedLine, how: str, check: str) -> None:
    """The log line of a line a check answered: the check's name."""
    log.info("mail %s: %s %s by %s", Shown(run.mail.message_id), line.spec.name, how, check)


def split(decision: Decision) -> tuple[Outcome, list[Notice]]:
    """A decision's outcome, and the notices it sends."""
    outcome = next(e for e in decision.effects if isinstance(e, Outcome))
    notices = [e for e in decision.effects if isinstance(e, Notice)]
    return outcome, notices
