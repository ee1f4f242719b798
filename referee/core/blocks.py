"""The players' mechanics inside the engine: a proposal's block kept until its vote, owned by
its rule once adopted, and run at the game's events (issue 26; rules 101, 109-111, 207, 211).

A block belongs to its rule's identity (109): an enactment adds it, an amendment replaces it
(a counter of the same name and kind keeps its values, as the ledger is by name), a repeal
leaves it with a rule no longer in force, whose handlers, actions and wins stop (101), and a
transmutation changes nothing in it. Rules run in precedence order (111, 211): immutable
rules first, then by number. A game without a block keeps `mechanics` None: none of this
runs, and its state is exactly what it was before the notation existed.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta
from fractions import Fraction

from referee.core import interpreter as i
from referee.core import outcomes
from referee.core import program as p
from referee.core.events import AcceptOffer, Act, AnswerQuestion
from referee.core.model import GameState, Proposal, ProposalKind, replace
from referee.core.step import Refusal, Step


def mechanics_of(state: GameState) -> i.Mechanics:
    return state.mechanics if state.mechanics is not None else i.Mechanics()


def owned(state: GameState) -> list[i.Owned]:
    """The blocks of the rules in force, in precedence order (111, 211): immutable rules
    first, then the lower number. Kept while the rules and the blocks are the same objects."""
    if state.mechanics is None:
        return []
    for rules, kept_blocks, made in _OWNED:
        if rules is state.rules and kept_blocks is state.mechanics.blocks:
            return made
    made = _owned(state)
    _OWNED[:] = [(state.rules, state.mechanics.blocks, made)]
    return made


_OWNED: list[tuple[object, object, list[i.Owned]]] = []


def _owned(state: GameState) -> list[i.Owned]:
    assert state.mechanics is not None
    found = []
    for block in state.mechanics.blocks:
        rule = state.rule_by_identity(block.owner)
        if rule is not None and rule.in_force:
            found.append(
                (rule.mutable, rule.number, i.Owned(rule.identity, rule.number, block.program))
            )
    found.sort(key=lambda row: (row[0], row[1]))
    return [row[2] for row in found]


def seed(state: GameState) -> bytes:
    """The dice's seed: the one made at `init`, else one derived from the game itself."""
    kept = mechanics_of(state).seed
    if kept:
        return bytes.fromhex(kept)
    return i.seed_from(f"{state.name}\x00{state.started_at.isoformat()}")


def table(state: GameState, now: datetime) -> i.Table:
    players = tuple(pl.email for pl in state.active_players)
    scores = tuple((pl.email, pl.score) for pl in state.players)
    turn = state.rounds_completed * 1000 + len(state.turns_taken)
    return i.Table(players, state.king, seed(state), state.events, now, UTC, turn, scores)


def keep_proposed(step: Step, number: int, program: p.Program | None) -> None:
    """A proposal's block (or none, after a revision that drops it) until its vote."""
    kept = mechanics_of(step.state)
    if program is None and not any(b.owner == number for b in kept.proposed):
        return
    proposed = tuple(b for b in kept.proposed if b.owner != number)
    if program is not None:
        proposed = (*proposed, i.Block(number, program))
    step.state = replace(step.state, mechanics=replace(kept, proposed=proposed))


def adopted(step: Step, proposal: Proposal, identity: int) -> None:
    """207: the adopted proposal's block now belongs to its rule; then every rule's handlers
    of `proposal.adopted`, but the rule's own (its own adoption does not run them)."""
    kept = step.state.mechanics
    if kept is None:
        return
    block = next((b for b in kept.proposed if b.owner == proposal.number), None)
    blocks = kept.blocks
    if proposal.kind in (ProposalKind.ENACT, ProposalKind.AMEND):
        blocks = tuple(b for b in blocks if b.owner != identity)  # an amendment replaces it
        if block is not None:
            blocks = (*blocks, i.Block(identity, block.program))
    proposed = tuple(b for b in kept.proposed if b.owner != proposal.number)
    clock = kept.clock or step.now  # 108: the clock's statements run from now on
    kept = replace(kept, blocks=blocks, proposed=proposed, clock=clock)
    step.state = replace(step.state, mechanics=kept)
    words: dict[str, i.Value] = {"author": proposal.proposer, "proposal": Fraction(proposal.number)}
    happen(step, "proposal.adopted", words, identity)


def happen(step: Step, event: str, words: dict[str, i.Value], skip: int | None = None) -> None:
    """Run the handlers of a game event and keep what they did."""
    rules = owned(step.state)
    if not rules:
        return
    result = i.happen(
        rules, table(step.state, step.now), mechanics_of(step.state).ledger, event, words, skip
    )
    apply(step, result)


def next_edge(state: GameState) -> datetime | None:
    """When the next EVERY of a rule in force is due, or None (issue 26)."""
    kept = state.mechanics
    if kept is None or kept.clock is None:
        return None
    clocks = {(e.period, e.edge) for rule in owned(state) for e in rule.program.clocks}
    if not clocks:
        return None
    periods = {period for period, _edge in clocks}
    later = kept.clock + timedelta(days=40)  # a month and a week hold every period's edge
    for at, period, edge in i.edges(kept.clock, later, UTC, periods):
        if (period, edge) in clocks:
            return at
    return None


def clock(step: Step) -> None:
    """The EVERYs due up to now: one event for each period the clock crossed (downtime too)."""
    kept = step.state.mechanics
    if kept is None or kept.clock is None or step.now <= kept.clock:
        return
    rules = owned(step.state)
    since = kept.clock
    for result in i.tick(rules, table(step.state, step.now), kept.ledger, since, step.now):
        apply(step, result)
    step.state = replace(step.state, mechanics=replace(mechanics_of(step.state), clock=step.now))


def apply(step: Step, result: i.Result) -> None:
    """An event's result into the state: the ledger, and `points` into the players' scores."""
    if not result.applied:
        return
    state = step.state
    for change in result.changes:
        if change.counter != p.POINTS or change.holder == p.GAME:
            continue
        player = state.player(change.holder)
        if player is not None:
            score = change.after.numerator // change.after.denominator
            state = state.with_player(replace(player, score=score))
    step.state = replace(state, mechanics=replace(mechanics_of(state), ledger=result.ledger))
    if result.winners:
        step.block_winners = result.winners


def new_seed(material: str) -> str:
    """A seed for a new game (`init`), from what the caller draws for it, as hex."""
    return hashlib.sha256(material.encode()).hexdigest()


# --- the commands a block adds (issue 26): an action, accepting an offer, the King's answer


_DECIMAL = re.compile(r"^-?\d{1,15}(\.\d{1,6})?$")


def _said(step: Step, result: i.Result) -> tuple[str, ...]:
    """A result's changes in words every language shares: "Bob Rossi 60 → 53 coins"."""
    return tuple(
        f"{_holder(step, c.holder)} {_number(c.before)} → {_number(c.after)} {c.counter}"
        for c in result.changes
    )


def _holder(step: Step, holder: str) -> str:
    return "game" if holder == p.GAME else step.name_of(holder)


def _number(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else i.text_of(value, 6)


def _rule_number(state: GameState, identity: int) -> str:
    rule = state.rule_by_identity(identity)
    return str(rule.number) if rule is not None else ""


def _refused(state: GameState, action: str, result: i.Result) -> Refusal:
    stop = result.stopped[0] if result.stopped else i.Stopped(0, i.StopReason.INVALID)
    rule = _rule_number(state, stop.rule) if stop.rule else ""
    return Refusal(outcomes.ActionRefused(action=action, rule=rule, why=stop.reason.value))


def act(step: Step, cmd: Act) -> outcomes.Accepted:
    """NAME args: the action's rule checks and runs it; one reply, citing the rule."""
    rules = owned(step.state)
    name = cmd.action.casefold()
    found = i.find_action(rules, name)
    if found is None:
        why = i.StopReason.UNKNOWN_ACTION.value
        raise Refusal(outcomes.ActionRefused(action=cmd.action, rule="", why=why))
    rule, action = found
    if len(cmd.args) != len(action.parameters):
        why = i.StopReason.ARGUMENTS.value
        raise Refusal(outcomes.ActionRefused(action=name, rule=str(rule.number), why=why))
    args: list[i.Value] = []
    for parameter, text in zip(action.parameters, cmd.args, strict=True):
        if parameter.kind is p.ArgKind.PLAYER:
            args.append(step.resolve(text).email)
        elif _DECIMAL.match(text.strip()):
            args.append(Fraction(text.strip()))
        else:
            why = i.StopReason.ARGUMENTS.value
            raise Refusal(outcomes.ActionRefused(action=name, rule=str(rule.number), why=why))
    kept = mechanics_of(step.state)
    result = i.act(rules, table(step.state, step.now), kept.ledger, cmd.sender, name, args)
    if not result.applied:
        raise _refused(step.state, name, result)
    apply(step, result)
    if result.offered is not None:
        offer = result.offered
        return outcomes.ActionOffered(
            action=name,
            rule=str(rule.number),
            to=step.name_of(offer.to),
            number=offer.number,
            until=offer.expires,
        )
    return outcomes.ActionDone(
        action=name,
        rule=str(rule.number),
        moved=_said(step, result),
        announced=tuple(s.text for s in result.said),
        questions=tuple(q.question for q in result.asked),
    )


def accept(step: Step, cmd: AcceptOffer) -> outcomes.Accepted:
    """ACCEPT N: the offer runs now, on the game as it stands."""
    kept = mechanics_of(step.state)
    offer = next((o for o in kept.ledger.offers if o.number == cmd.number), None)
    action = offer.action if offer is not None else str(cmd.number)
    result = i.accept(
        owned(step.state), table(step.state, step.now), kept.ledger, cmd.number, cmd.sender
    )
    if not result.applied:
        if result.ledger is not kept.ledger:  # an expired offer is closed all the same
            step.state = replace(step.state, mechanics=replace(kept, ledger=result.ledger))
        raise _refused(step.state, action, result)
    apply(step, result)
    rule = _rule_number(step.state, offer.rule) if offer is not None else ""
    return outcomes.OfferAccepted(
        action=action, rule=rule, number=cmd.number, moved=_said(step, result)
    )


def answer(step: Step, cmd: AnswerQuestion) -> outcomes.Accepted:
    """ANSWER N YES|NO: the King's answer; the effects after the ASK run now."""
    kept = mechanics_of(step.state)
    question = next((q for q in kept.ledger.questions if q.number == cmd.number), None)
    result = i.answer(
        owned(step.state), table(step.state, step.now), kept.ledger, cmd.number, cmd.yes
    )
    if question is None or not result.applied:
        raise _refused(step.state, str(cmd.number), result)
    apply(step, result)
    return outcomes.QuestionAnswered(
        number=cmd.number,
        yes=cmd.yes,
        rule=_rule_number(step.state, question.rule),
        moved=_said(step, result),
    )


# --- what the mail side shows (issue 26: STATUS, SCORES, HELP, status --json)


def _shown_value(value: Fraction) -> int | float:
    """A counter value for JSON and templates: an integer, or a decimal as a float (the
    counter's decimals are at most a few, so the float prints them exactly)."""
    return value.numerator if value.denominator == 1 else float(value)


def counters_data(state: GameState) -> dict[str, dict[str, int | float] | int | float]:
    """The counters in force as `status --json` shows them: a `FOR player` counter maps each
    player's address to its value (and `"game"` to the game's pot, when there is one), a
    `FOR game` counter is a number; `points` stays in the players' scores."""
    rules = owned(state)
    if not rules:
        return {}
    ledger = mechanics_of(state).ledger
    shown: dict[str, dict[str, int | float] | int | float] = {}
    for name, counter in i.counters(rules).items():
        if name == p.POINTS:
            continue
        start = counter.start or Fraction(0)
        if counter.kind is p.HolderKind.GAME:
            shown[name] = _shown_value(ledger.value(name, p.GAME, start))
            continue
        values: dict[str, int | float] = {
            pl.email: _shown_value(ledger.value(name, pl.email, start))
            for pl in state.players
            if pl.active
        }
        pot = ledger.value(name, p.GAME)
        if pot:
            values[p.GAME] = _shown_value(pot)
        shown[name] = values
    return shown


def actions_data(state: GameState) -> list[dict[str, str]]:
    """The actions of the rules in force, for HELP: its command, its arguments, its rule."""
    rows = []
    for rule in owned(state):
        for action in rule.program.actions:
            args = " ".join(f"<{a.name}>" for a in action.parameters)
            rows.append(
                {
                    "command": action.name.upper(),
                    "syntax": f"{action.name.upper()} {args}".strip(),
                    "rule": str(rule.number),
                    "by": action.mover.value,
                }
            )
    return rows


def questions_data(state: GameState) -> list[dict[str, str | int]]:
    """The King's open questions (STATUS): number, rule and the question."""
    return [
        {"number": q.number, "rule": _rule_number(state, q.rule), "question": q.question}
        for q in mechanics_of(state).ledger.questions
    ]
