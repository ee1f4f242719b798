"""The roster: who joins, who moves to a new address, and from when a newcomer plays (201, 203).

A stranger's confirmed request to join reaches the King, who answers yes or no (`admit`); the
operator may add a player directly (`enrol`). A newcomer starts with 0 points, takes a place in
the turn order by surname from the next round (201: the round in progress keeps its players),
and votes only on proposals circulated after joining (203: an open vote keeps its voters, so a
newcomer's abstention cannot sink it). A player who moves keeps everything but the address;
the new address may not be another player's, even with a "+tag" added to its local part or in
other capitals (`same_mailbox`: both reach one mailbox), nor the game's own (the service checks
the game's addresses before any confirmation is mailed). A newcomer's address may not reach an
active player's mailbox either (`procedure.bar`: one mailbox, one seat).
A newcomer whose name or address looks like a player's by Unicode's confusables (found by the
mail layer, `mail.lookalike`, and carried by the request) is named in the King's prompt, and
only a written `ADMIT N YES` admits it: a bare "yes" in the thread is refused with a reason.
Leaving is `QUIT` (114), in `machine`. Pure: the confirmations by mail live in the mail layer.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from referee.core import blocks, names, notices, outcomes, view
from referee.core.events import Admit, AskToJoin, Enrol, MoveAddress
from referee.core.model import GameState, JoinRequest, Player, RequestStatus, replace
from referee.core.names import same_mailbox as same_mailbox  # the service checks moves with it
from referee.core.names import seat_of
from referee.core.order import rotation
from referee.core.step import Refusal, Step
from referee.core.threads import Thread


def ask_to_join(step: Step, cmd: AskToJoin) -> outcomes.Accepted:
    s = step.state
    name = " ".join(cmd.name.split())
    waiting = next(  # one mailbox, one request: bruno+a@ and bruno+b@ are one person (201)
        (
            r
            for r in s.requests
            if r.status is RequestStatus.PENDING and same_mailbox(r.email, cmd.sender)
        ),
        None,
    )
    if waiting is not None:
        raise Refusal(outcomes.RequestPending(email=waiting.email))
    number = len(s.requests) + 1
    request = JoinRequest(number, cmd.sender, name, step.now, lookalikes=cmd.lookalikes)
    step.state = replace(s, requests=(*s.requests, request))
    prompt_join(step, step.state.requests[-1])
    return outcomes.JoinAsked(name=name, king=step.name_of(s.king))


def prompt_join(step: Step, request: JoinRequest, reminder: bool = False) -> None:
    """Ask the King for a yes or no; a bare reply in the thread is the answer."""
    step.notify(
        step.to_king(),
        notices.JoinPrompt(
            number=request.number,
            name=request.name,
            email=request.email,
            round=step.state.rounds_completed + 2,
            close=[f"{p.name} ({p.email})" for p in names.close_names(step.state, request.name)],
            reminder=reminder,
            lookalike=_shown_players(step.state, request.lookalikes),
        ),
        thread=Thread.join(request.number),
    )


def _shown_players(state: GameState, emails: tuple[str, ...]) -> list[str]:
    """ "Name (address)" of each player named, as the King's prompt shows them."""
    shown = []
    for email in emails:
        player = state.player(email)
        shown.append(f"{player.name} ({email})" if player is not None else email)
    return shown


def admit(step: Step, cmd: Admit) -> outcomes.Accepted:
    request = step.state.request(cmd.request)
    if request is None or request.status is not RequestStatus.PENDING:
        raise Refusal(outcomes.UnknownRequest(number=cmd.request))
    if cmd.yes and cmd.bare and request.lookalikes:  # a look-alike is admitted in writing
        raise Refusal(
            outcomes.LookalikeNeedsWrittenYes(
                number=request.number,
                name=request.name,
                lookalike=_shown_players(step.state, request.lookalikes),
            )
        )
    if cmd.yes and seat_of(step.state, request.email) is not None:  # seated since it asked
        raise Refusal(outcomes.MailboxPlaying(email=request.email))
    status = RequestStatus.ADMITTED if cmd.yes else RequestStatus.REFUSED
    answered = replace(request, status=status)
    if cmd.yes:
        first = enrol_player(step, request.email, request.name, "", "king")
    else:
        first = 0
        step.notify(
            (request.email,),
            notices.JoinRefused(name=request.name, king=step.name_of(step.state.king)),
            thread=Thread.join(request.number),
        )
    step.state = replace(
        step.state,
        requests=tuple(answered if r.number == request.number else r for r in step.state.requests),
    )
    return outcomes.Admitted(name=request.name, yes=cmd.yes, round=first)


def enrol(step: Step, cmd: Enrol) -> outcomes.Accepted:
    first = enrol_player(step, cmd.email, cmd.name, cmd.surname, "operator")
    # a request of the same address waits no more
    step.state = replace(
        step.state,
        requests=tuple(
            replace(r, status=RequestStatus.ADMITTED)
            if r.email == cmd.email and r.status is RequestStatus.PENDING
            else r
            for r in step.state.requests
        ),
    )
    return outcomes.Enrolled(name=" ".join(cmd.name.split()), round=first)


def enrol_player(step: Step, email: str, name: str, surname: str, by: str) -> int:
    """A new player at 0 points, in the turn order from the next round; returns that round."""
    s = step.state
    existing = s.player(email)
    if existing is not None and existing.active:
        raise Refusal(outcomes.AlreadyPlaying(email=email))
    taken = names.same_name(s, name)  # another joined under it while the request waited
    if taken is not None:
        raise Refusal(outcomes.NameTaken(name=taken.name))
    name = " ".join(name.split())
    player = Player(
        name=name,
        email=email,
        surname=" ".join(surname.split()) or name.split()[-1],
        first_round=s.rounds_completed + 1,
        first_proposal=s.next_proposal_number,
    )
    others = tuple(p.email for p in s.active_players)
    if existing is None:  # a player who left and comes back starts afresh
        step.state = replace(s, players=(*s.players, player))
    else:
        step.state = s.with_player(player)
    blocks.happen(step, "player.joined", {"player": email})
    shown_round = player.first_round + 1
    upcoming = replace(step.state, rounds_completed=player.first_round)
    step.notify(
        others,
        notices.PlayerJoined(
            player=name,
            round=shown_round,
            first_proposal=player.first_proposal,
            order=[p.name for p in rotation(upcoming)],
            by=by,
        ),
    )
    step.notify(
        (email,),
        notices.Welcome(
            player=name,
            round=shown_round,
            first_proposal=player.first_proposal,
            **view.ruleset_data(step.state),
        ),
    )
    return shown_round


def address_taken(state: GameState, new: str, sender: str) -> bool:
    """Whether `new` is a player's address other than the sender's own, tag and case aside."""
    return any(p.email != sender and same_mailbox(p.email, new) for p in state.players)


def move_address(step: Step, cmd: MoveAddress) -> outcomes.Accepted:
    new = cmd.new.strip()
    if step.state.player(new) is not None or address_taken(step.state, new, cmd.sender):
        raise Refusal(outcomes.AddressTaken(email=new))
    me = step.state.player(cmd.sender)
    assert me is not None  # the gate let only a player through
    step.state = renamed(step.state, cmd.sender, new)
    moved = notices.AddressMoved(player=me.name, old=cmd.sender, new=new)
    step.notify(tuple(p.email for p in step.state.active_players), moved)
    step.notify((cmd.sender,), moved)  # the old address learns where its mail goes now
    return outcomes.AddressMoved(name=me.name, new=new)


def renamed(state: GameState, old: str, new: str) -> GameState:
    """The state with every mention of one address (a player, a vote, a King, a turn) moved."""

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return new if value == old else value
        if isinstance(value, tuple):
            return tuple(walk(v) for v in value)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return replace(
                value, **{f.name: walk(getattr(value, f.name)) for f in dataclasses.fields(value)}
            )
        return value

    moved: GameState = walk(state)
    return moved
