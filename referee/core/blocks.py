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
from datetime import UTC, datetime
from fractions import Fraction

from referee.core import interpreter as i
from referee.core import program as p
from referee.core.model import GameState, Proposal, ProposalKind, replace
from referee.core.step import Step


def mechanics_of(state: GameState) -> i.Mechanics:
    return state.mechanics if state.mechanics is not None else i.Mechanics()


def owned(state: GameState) -> list[i.Owned]:
    """The blocks of the rules in force, in precedence order (111, 211): immutable rules
    first, then the lower number."""
    if state.mechanics is None:
        return []
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
    step.state = replace(step.state, mechanics=replace(kept, blocks=blocks, proposed=proposed))
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


def new_seed(material: str) -> str:
    """A seed for a new game (`init`), from what the caller draws for it, as hex."""
    return hashlib.sha256(material.encode()).hexdigest()
