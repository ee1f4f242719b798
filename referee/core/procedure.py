"""The procedure as data: who may make which move in which stage of the game, and by what rule.

One table answers "may X happen in stage Y?" for every command, in the spirit of h11's
`EVENT_TRIGGERED_TRANSITIONS`. Each row names the command, the role its sender must hold
(player, subject, the player whose turn it is, the proposer, the King, the judge of the appeal,
the deposed King), the stages in which it may be made, and the rules that grant it: 114
(leaving), 112 (debate), 201-203 and 208 (the turn and the vote), 209 (the tie), 111 and 211
(parameters), 212-215 (appeals, accusations, the crown). `bar` checks a command against its row
in one place, before any handler runs, and says why it is refused. What depends on the object a
command names (is proposal 301 open, is A1 settled) is left to the handler.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from referee.core import mechanics, names, outcomes
from referee.core.events import (
    AcceptOffer,
    Accuse,
    Act,
    Admit,
    Agree,
    AnswerQuestion,
    Archive,
    AskToJoin,
    Award,
    ChooseDelivery,
    Command,
    Confirm,
    Crown,
    Debate,
    Enrol,
    Extend,
    GiveRuling,
    MoveAddress,
    NameChampion,
    NameWinner,
    OpenAppeal,
    Propose,
    Query,
    Quit,
    Reason,
    Revise,
    SetParameter,
    Suggest,
    Vote,
)
from referee.core.mechanics import SPEC, Mechanic
from referee.core.model import GameState, Phase

M = Mechanic


class Stage(enum.StrEnum):
    """Where the game stands: the turn's parts (202), the 212 hold, a 209 tie, the end."""

    PROPOSE = "propose"  # 202 (1)
    DEBATE = "debate"  # 202 (2), 112
    VOTING = "voting"  # 202 (3), 203
    AWARD = "award"  # 202 (4)
    APPEAL = "appeal"  # 212: the next turn waits for a settlement
    TIE = "tie"  # 209: the King names the winner among players level
    OVER = "over"  # 209, 215


class Role(enum.StrEnum):
    """Who the sender must be for a move."""

    ANYONE = "anyone"  # a player, even one who left: read-only queries
    PLAYER = "player"  # an active player (114)
    SUBJECT = "subject"  # an active player who is not King (213)
    TURN_PLAYER = "turn player"  # the player whose turn it is (201, 202)
    PROPOSER = "proposer"  # who made the proposal (112)
    KING = "King"  # 202, 209, 212, 214
    JUDGE = "judge"  # the King in office, or the Champion he named (212, 213, 214)
    DEPOSED = "deposed King"  # 213
    STRANGER = "stranger"  # anyone not playing, from a confirmed address: asks to join (201)
    OPERATOR = "operator"  # who runs the referee: `nomic-referee players` (201, 114)


IN_TURN = frozenset({Stage.PROPOSE, Stage.DEBATE, Stage.VOTING, Stage.AWARD, Stage.APPEAL})
ALWAYS = IN_TURN | {Stage.TIE}  # every stage but the end


@dataclass(frozen=True)
class Move:
    """One row of the table: a command, its sender's role, its stages, what grants it."""

    command: type
    name: str  # the English keyword, for the docs and HELP
    role: Role
    stages: frozenset[Stage]
    grants: tuple[Mechanic, ...]  # the mechanics, hence the rules, that grant it
    outside: Reason = Reason.WRONG_PHASE  # the refusal in a stage of the turn not listed
    note: str = ""  # what the handler checks on the object the command names
    needs: Mechanic | None = None  # a mechanic only a mutable rule grants: refused once gone


TABLE: tuple[Move, ...] = (
    Move(
        Act,
        "an ACTION of a rule (its NAME and arguments)",
        Role.PLAYER,
        ALWAYS,
        (),
        note="a rule in force declares it: its BY, LIMIT, FORBIDs and REQUIRE",
    ),
    Move(
        AcceptOffer,
        "ACCEPT N",
        Role.PLAYER,
        ALWAYS,
        (),
        note="the offer was made to the sender and its days are not over",
    ),
    Move(AnswerQuestion, "ANSWER N YES / NO", Role.KING, ALWAYS, (), note="a rule's ASK waits"),
    Move(
        Propose,
        "PROPOSE",
        Role.TURN_PLAYER,
        frozenset({Stage.PROPOSE}),
        (M.TURNS, M.TURN, M.CHANGES),
    ),
    Move(
        Revise,
        "REVISE",
        Role.PROPOSER,
        frozenset({Stage.DEBATE}),
        (M.DEBATE,),
        Reason.DEBATE_OVER,
        "the proposal is the current one",
    ),
    Move(
        Vote,
        "VOTE",
        Role.PLAYER,
        IN_TURN,
        (M.VOTING, M.ONE_VOTE),
        note="the proposal is open for votes",
    ),
    Move(
        Extend,
        "EXTEND",
        Role.KING,
        frozenset({Stage.DEBATE}),
        (M.DEBATE,),
        Reason.DEBATE_OVER,
        "the proposal is the current one",
    ),
    Move(Award, "AWARD", Role.KING, frozenset({Stage.AWARD}), (M.TURN,)),
    Move(NameWinner, "WINNER", Role.KING, frozenset({Stage.TIE}), (M.WINNING,), Reason.NO_TIE),
    Move(OpenAppeal, "APPEAL", Role.PLAYER, ALWAYS, (M.APPEALS,), needs=M.APPEALS),
    Move(
        NameChampion,
        "CHAMPION",
        Role.KING,
        ALWAYS,
        (M.APPEALS, M.DEPOSITION),
        note="the King is a party, or it is an accusation",
    ),
    Move(
        GiveRuling,
        "RULING",
        Role.JUDGE,
        ALWAYS,
        (M.APPEALS, M.DEPOSITION, M.IMPOSSIBLE),
        note="the appeal is open",
    ),
    Move(
        Agree, "AGREE / DISAGREE", Role.PLAYER, ALWAYS, (M.APPEALS,), note="a ruling is published"
    ),
    Move(Accuse, "ACCUSE", Role.SUBJECT, ALWAYS, (M.DEPOSITION,), needs=M.DEPOSITION),
    Move(Crown, "CROWN", Role.DEPOSED, ALWAYS, (M.DEPOSITION, M.ONE_KING)),
    Move(Quit, "QUIT", Role.PLAYER, ALWAYS, (M.LEAVING,)),
    Move(
        Confirm,
        "CONFIRM",
        Role.KING,
        ALWAYS,
        (M.PRIORITY, M.CONFLICTS),
        note="a parameter question waits",
    ),
    Move(
        SetParameter,
        "SET",
        Role.KING,
        ALWAYS,
        (M.PRIORITY, M.CONFLICTS),
        note="a parameter question waits",
    ),
    Move(
        Debate,
        "SAY (or words in reply to a proposal)",
        Role.PLAYER,
        ALWAYS,
        (M.DEBATE,),
        note="the proposal exists; the same words once",
    ),
    Move(ChooseDelivery, "DEBATE ALL / DIGEST / NONE", Role.PLAYER, ALWAYS, (M.DEBATE,)),
    Move(
        Suggest,
        "(a vote in plain words, kept for a bare yes)",
        Role.ANYONE,
        ALWAYS | {Stage.OVER},
        (),
    ),
    Move(
        Query, "STATUS, RULES, RULE, HISTORY, SCORES, HELP", Role.ANYONE, ALWAYS | {Stage.OVER}, ()
    ),
    Move(
        Archive,
        "ARCHIVE",
        Role.ANYONE,
        ALWAYS | {Stage.OVER},
        (),
        note="once a day (UTC) per player",
    ),
    Move(AskToJoin, "JOIN", Role.STRANGER, ALWAYS, (M.TURNS,), note="no request of theirs waits"),
    Move(Admit, "ADMIT", Role.KING, ALWAYS, (M.TURNS,), note="the request waits for an answer"),
    Move(MoveAddress, "ADDRESS", Role.PLAYER, ALWAYS, (M.TURNS,), note="the new address is free"),
    Move(Enrol, "players add", Role.OPERATOR, ALWAYS, (M.TURNS,), note="not playing already"),
)
LEGALITY: Mapping[type, Move] = {move.command: move for move in TABLE}


def stage_of(state: GameState) -> Stage:
    if state.phase is Phase.OVER:
        return Stage.OVER
    if state.tie:
        return Stage.TIE
    return Stage(state.phase.value)


def bar(state: GameState, cmd: Command | Enrol) -> outcomes.Refused | None:
    """The one gate: None when the table allows the move now, else why not.

    The order is the game's: who is playing at all; the holds on the whole game (its end, a
    tie, an appeal); the sender's role; then the part of the turn.
    """
    move = LEGALITY[type(cmd)]
    if isinstance(cmd, Enrol | AskToJoin):  # from outside the table: only the end bars them
        if state.phase is Phase.OVER:
            return outcomes.GameOver(winner=_name(state, state.winner))
        email = cmd.email if isinstance(cmd, Enrol) else cmd.sender
        joined = state.player(email)
        if joined is not None and joined.active:
            return outcomes.AlreadyPlaying(email=email)
        taken = names.same_name(state, cmd.name)
        if taken is not None:
            return outcomes.NameTaken(name=taken.name)
        unsafe = names.unsafe(cmd.name)
        if unsafe:
            return outcomes.NameUnsafe(characters=[_shown(c) for c in unsafe])
        if names.seat_of(state, email) is not None:  # one mailbox, one seat
            return outcomes.MailboxPlaying(email=email)
        return None
    player = state.player(cmd.sender)
    if player is None or (move.role is not Role.ANYONE and not player.active):
        return outcomes.NotActive()
    stage = stage_of(state)
    if move.role is Role.ANYONE:
        return None
    if stage is Stage.OVER:
        return outcomes.GameOver(winner=_name(state, state.winner))
    if move.needs is not None and not mechanics.runs(state, move.needs):
        return outcomes.NotInForce(mechanic=move.needs.value)
    if stage not in move.stages and stage is Stage.TIE:
        return outcomes.WrongPhase(phase=stage.value, mechanic="winning")
    if stage not in move.stages and stage is Stage.APPEAL:
        return outcomes.AppealPending(appeals=[a.id for a in state.open_appeals])
    refused = _role_bar(state, cmd, move.role)
    if refused is not None:
        return refused
    if stage not in move.stages:
        return _outside(state, cmd, move, stage)
    return None


def _shown(character: str) -> str:
    """A character as a reader can tell it: itself if printable, else its code point."""
    return character if character.isprintable() else f"U+{ord(character):04X}"


def _outside(state: GameState, cmd: Command, move: Move, stage: Stage) -> outcomes.Refused:
    """The refusal of a move made in a part of the turn its row does not list."""
    if move.outside is Reason.DEBATE_OVER:  # a move on the debate of a proposal (112)
        number = getattr(cmd, "number", 0) or state.current_proposal
        if number is None:
            return outcomes.WrongPhase(phase=stage.value, mechanic="turn")
        if state.proposal(number) is None:
            return outcomes.UnknownProposal(number=number)
        return outcomes.DebateOver(number=number)
    if move.outside is Reason.NO_TIE:
        return outcomes.NoTie()
    return outcomes.WrongPhase(phase=stage.value, mechanic="turn")


def _role_bar(state: GameState, cmd: Command, role: Role) -> outcomes.Refused | None:
    sender = cmd.sender
    if role is Role.KING:
        if state.king is None:
            return outcomes.NoKing()
        if sender != state.king:
            return outcomes.NotKing(king=_name(state, state.king))
    elif role is Role.SUBJECT:
        if state.king is None:
            return outcomes.NoKing()
        if sender == state.king:
            return outcomes.KingCannotAccuse()
    elif role is Role.TURN_PLAYER:
        if sender != state.turn_player:
            return outcomes.NotYourTurn(player=_name(state, state.turn_player))
    elif role is Role.DEPOSED:
        if sender != state.deposed:
            return outcomes.NotDeposed()
    elif role is Role.PROPOSER and isinstance(cmd, Revise):
        proposal = state.proposal(cmd.number)
        if proposal is not None and proposal.proposer != sender:
            return outcomes.NotProposer(number=cmd.number)
    elif role is Role.JUDGE and isinstance(cmd, GiveRuling):
        appeal = state.appeal(cmd.appeal)
        judge = (
            state.judge_of(appeal)
            if appeal is not None and appeal in state.open_appeals
            else sender
        )
        if judge is None and appeal is not None:
            return outcomes.NoJudgeYet(id=appeal.id)
        if judge != sender:
            return outcomes.NotJudge(id=cmd.appeal.upper(), judge=_name(state, judge))
    return None


def _name(state: GameState, email: str | None) -> str:
    player = state.player(email) if email else None
    return player.name if player is not None else (email or "")


def markdown() -> str:
    """The table for docs/procedure.md: a row per command, a column per stage."""
    stages = [s for s in Stage if s is not Stage.OVER]
    head = ["command", "who", *[s.value for s in stages], "rules", "also checked"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for move in TABLE:
        marks = ["yes" if s in move.stages else "·" for s in stages]
        seeds = dict.fromkeys(str(SPEC[m].seed) for m in move.grants)
        rules = ", ".join(seeds) or "—"
        row = [f"`{move.name}`", move.role.value, *marks, rules, move.note or ""]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"
