"""Requests confirmed by reply: joining the game, moving an address (201, 114).

A stranger may ask to join, and a player to move to a new address; either is checked now and
the address is mailed for a confirmation (`ask_confirmation`). The address's bare yes in the
confirmation's thread makes the request an event of the game (`confirmed`). A stranger's mail
passes every check of a player's mail but those about being a player (`stranger`): only a
believed address may ask or confirm.
"""

from __future__ import annotations

import logging
from datetime import datetime

from referee.core import codec, engine, outcomes, procedure, roster
from referee.core.events import AskToJoin, Command, MoveAddress, Outcome
from referee.core.model import GameState
from referee.desk import confirm, deciding, reading, writing
from referee.desk.answering import Desk, Receipt
from referee.desk.known import Known, asked_of, look_up
from referee.desk.letters import item
from referee.desk.logged import Shown
from referee.desk.screen import CHAIN, Intake, Verdict
from referee.mail import lookalike
from referee.mail.parse import InboundMail
from referee.store.store import Pending, UnitOfWork
from referee.store.tables import InboundStatus

log = logging.getLogger("referee")
_NOT_FOR_STRANGERS = ("automatic", "single_sender", "player", "daily_allowance")


def believed(intake: Intake, work: UnitOfWork) -> Verdict | None:
    """The screening a stranger's request or confirmation passes: every check of a player's
    mail but the ones about being a player (201: only a believed address may ask or confirm)."""
    for name, check in CHAIN:
        if name in _NOT_FOR_STRANGERS:
            continue
        verdict = check(intake, work)
        if verdict is not None:
            return verdict
    return None


def stranger(desk: Desk, work: UnitOfWork, intake: Intake) -> tuple[Receipt, GameState] | None:
    """A stranger's confirmation of a request, or a request to join; None: neither.

    Both pass the same checks as a player's mail (headers, authentication, size) first:
    a mail not shown to come from its address gets the short note, never a confirmation.
    """
    mail, at, state = intake.mail, intake.at, intake.state
    game = desk.settings.game.name
    key = confirm.confirmation_thread(mail.references, mail.in_reply_to, game)
    pending = work.pending(at, token=key) if key else None
    confirming = (
        pending is not None and pending.address == mail.sender and confirm.bare_yes(mail.own_words)
    )
    parsed = reading.mail_commands(mail)
    join = next((p for p in parsed if p.spec.name == "join"), None)
    if not confirming and join is None:
        return None
    stopped = believed(intake, work)
    if stopped is not None:
        return desk.refuse(work, intake, stopped), state
    if confirming and pending is not None:
        return confirmed(desk, work, mail, at, state, pending)
    assert join is not None
    work.record_inbound(mail, at, InboundStatus.STRANGER, "join", 1)
    if isinstance(join.command, AskToJoin):
        known = look_up(desk.settings, work, mail, at, [join.command])
        asked: list[writing.Asked] = []
        refusal = ask_confirmation(desk, known, mail, at, state, join.command, asked)
        writing.requests(work, asked, at)
        if refusal.ok:  # the confirmation mail is the answer
            return Receipt(mail.message_id, InboundStatus.STRANGER, 1, 0, 1), state
    else:
        syntax = join.spec.syntax(desk.settings.game.language)
        refusal = Outcome(outcomes.Syntax(syntax=syntax, problem=join.problem))
    sent = 0
    day = at.date().isoformat()
    if work.first_note_today(mail.sender, day, desk.settings.limits.stranger_notes_per_day):
        sent = desk.reply(work, mail, at, state, [item(join.line, refusal)])
    return Receipt(mail.message_id, InboundStatus.STRANGER, 1, 1, sent), state


def ask_confirmation(
    desk: Desk,
    known: Known,
    mail: InboundMail,
    at: datetime,
    state: GameState,
    command: AskToJoin | MoveAddress,
    asked: list[writing.Asked],
) -> Outcome:
    """Check a request to join or move now, and make the mail that asks its address for a
    confirmation (kept in `asked`, written by `writing.requests`); no store access."""
    refused = procedure.bar(state, command)
    if refused is not None:
        return Outcome(refused)
    address = asked_of(command)
    if isinstance(command, MoveAddress):
        kind = "address"
        if any(roster.same_mailbox(address, ours) for ours in desk.settings.game.addresses):
            return Outcome(outcomes.AddressOfGame(email=address))
        if state.player(address) is not None or roster.address_taken(
            state, address, command.sender
        ):
            return Outcome(outcomes.AddressTaken(email=address))
    else:
        kind = "join"
        waiting = next(  # one mailbox, one request (201): eve+a@ and eve+b@ are one person
            (
                r.email
                for r in state.requests
                if r.status == "pending" and roster.same_mailbox(r.email, address)
            ),
            None,
        )
        if waiting is not None:
            return Outcome(outcomes.RequestPending(email=waiting))
        limit = desk.settings.limits.joins_per_day
        joins = known.joins_today + sum(1 for a in asked if a.request.kind == "join")
        if joins >= limit:
            return Outcome(outcomes.JoinsFull(limit=limit))
    if address in known.waiting or any(a.request.address == address for a in asked):
        return Outcome(outcomes.RequestPending(email=address))
    token = confirm.token(mail.dedupe_key, kind)
    earlier = next((a.request for a in asked if a.request.token == token), None)
    if earlier is not None:  # one mail, one move: the second waits for the first's answer
        return Outcome(outcomes.RequestPending(email=earlier.address))
    me = state.player(mail.sender)
    name = command.name if isinstance(command, AskToJoin) else (me.name if me else "")
    request = Pending(token, kind, address, name, command.sender)
    asked.append(writing.Asked(request, desk.letters.confirmation(mail, at, request)))
    if isinstance(command, MoveAddress):
        return Outcome(outcomes.AddressConfirmSent(new=address))
    return Outcome(outcomes.JoinConfirmSent(name=name))


def confirmed(
    desk: Desk,
    work: UnitOfWork,
    mail: InboundMail,
    at: datetime,
    state: GameState,
    pending: Pending,
) -> tuple[Receipt, GameState]:
    """The address said yes: the request becomes an event of the game."""
    work.record_inbound(mail, at, InboundStatus.PROCESSED, "confirmation", 1)
    command: Command = (
        lookalike.asking(state, mail.sender, pending.name)
        if pending.kind == "join"
        else MoveAddress(pending.old, pending.address)
    )
    spell = "JOIN" if pending.kind == "join" else "ADDRESS"
    decision = engine.decide(state, command, at)
    outcome, notices = deciding.split(decision)
    if outcome.ok:
        work.append_event(codec.event_to_data(command), at, mail.message_id)
        work.confirmed(pending.token)
        state = decision.state
    log.info("mail %s: %s confirmed -> %s", Shown(mail.message_id), spell, outcome.code)
    line = f"{spell} {pending.name if pending.kind == 'join' else pending.address}"
    sent = desk.reply(work, mail, at, state, [item(line, outcome)])
    if outcome.ok:
        sent += desk.emit(work, notices, at, state, inbound=mail.dedupe_key)
    refused = 0 if outcome.ok else 1
    return Receipt(mail.message_id, InboundStatus.PROCESSED, 1, refused, sent), state
