"""The engine's short cuts for a fast replay give what the long way gives (213, 109, 201).

A replay proves a result only if it makes the same state and chain as the live service (213):
each short cut the engine takes for speed (issue 19) is held here to the plain code it
replaces, state after state through a whole example game: the copying `replace`, a proposal
found where its number puts it (109), the rules indexed by identity, the turn order kept per
roster (201), the values in force found in one pass over the rules (111, 211), the
snapshot's text made from its members' kept texts.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from examples.make_examples import START, build
from referee.config import load_settings
from referee.core import codec, notices, order, outcomes, params
from referee.core.model import GameState, Player, field_names, replace
from referee.service import Referee
from referee.store.store import Store
from tests.sink import game_config


def states(tmp_path: Path) -> list[GameState]:
    """Every state of the Italian example game (rules amended, proposals, appeals, scores)."""
    settings = load_settings(game_config(tmp_path, "sqlite://"))
    _, mails = build("it")
    store = Store(settings.database_url)
    try:
        referee = Referee.create(store, settings, START)
        seen = [referee.state]
        for raw, at, _sender in mails:
            referee.receive(raw, at)
            seen.append(referee.state)
    finally:
        store.close()
    return seen


def plain_effective(state: GameState) -> dict[str, int]:
    """Each parameter's value in force, found rule by rule for each parameter."""
    house = dict(state.house_parameters)
    in_force = [r for r in state.rules if r.in_force]
    values = {}
    for spec in params.SPECS:
        holder = params.winning_rule(r for r in in_force if r.parameter(spec.name) is not None)
        raw = holder.parameter(spec.name) if holder is not None else house.get(spec.name)
        values[spec.name] = int(raw) if raw is not None else spec.default
    return values


def test_the_engines_short_cuts_give_what_the_long_way_gives(tmp_path: Path) -> None:
    seen = states(tmp_path)
    assert len(seen) > 30 and len(seen[-1].proposals) > 3 and len(seen[-1].rules) > 20
    for state in seen:
        assert codec.state_json(state) == json.dumps(
            codec.state_to_data(state), ensure_ascii=False, separators=(",", ":")
        )
        for number in (0, 300, *(p.number for p in state.proposals), 10_000):
            assert state.proposal(number) == next(
                (p for p in state.proposals if p.number == number), None
            )
        for p in state.proposals:
            revised = replace(p, revisions=p.revisions + 1)
            assert state.with_proposal(revised).proposals == tuple(
                revised if q.number == p.number else q for q in state.proposals
            )
        for identity in (0, *(r.identity for r in state.rules), 10_000):
            assert state.rule_by_identity(identity) is next(
                (r for r in state.rules if r.identity == identity), None
            )
        assert params.effective(state) == plain_effective(state)
        assert order.turn_order(state) == tuple(
            sorted((p for p in state.players if p.active), key=order.player_key)
        )
        changed = replace(state, events=state.events + 1, phase=state.phase)
        assert changed == dataclasses.replace(state, events=state.events + 1)
        assert repr(changed) == repr(dataclasses.replace(state, events=state.events + 1))


def test_a_proposal_out_of_its_place_and_a_changed_roster_are_still_found(
    tmp_path: Path,
) -> None:
    """The short cuts look where things usually are and check: a proposal list not in number
    order, or a roster that changed, gives the plain answer."""
    state = states(tmp_path)[-1]
    backwards = replace(state, proposals=tuple(reversed(state.proposals)))
    gapped = replace(state, proposals=state.proposals[:1] + state.proposals[2:])
    for p in state.proposals:
        assert backwards.proposal(p.number) is p
        assert gapped.proposal(p.number) is (None if p is state.proposals[1] else p)
        revised = replace(p, revisions=p.revisions + 1)
        for shuffled in (backwards, gapped):
            assert shuffled.with_proposal(revised).proposals == (
                tuple(revised if q.number == p.number else q for q in shuffled.proposals)
                if shuffled.proposal(p.number)
                else (*shuffled.proposals, revised)
            )
    order.turn_order(state)
    renamed = state.with_player(replace(state.players[0], surname="Zzz", name="Zzz Zzz"))
    assert order.turn_order(renamed)[-1].email == state.players[0].email
    gone = state.with_player(replace(state.players[0], active=False))
    assert state.players[0].email not in {p.email for p in order.turn_order(gone)}
    assert order.turn_order(state) == tuple(sorted(state.active_players, key=order.player_key))


def test_replace_refuses_what_dataclasses_replace_refuses() -> None:
    player = Player("Ada Rossi", "ada@example.org", "Rossi")
    with pytest.raises(TypeError):
        replace(player, surnam="Bianchi")  # type: ignore[call-arg]
    moved = replace(player, score=3, email="ada@example.com")
    assert moved == dataclasses.replace(player, score=3, email="ada@example.com")
    assert player.score == 0 and player.email == "ada@example.org"


def test_every_payload_gives_the_fields_dataclasses_gives() -> None:
    """The field names kept per class are `dataclasses.fields`' own, for every payload a
    template reads (outcomes and notices)."""
    kinds: list[type] = [outcomes.Accepted, outcomes.Refused, notices.NoticePayload]
    seen = 0
    while kinds:
        kind = kinds.pop()
        kinds.extend(kind.__subclasses__())
        if dataclasses.is_dataclass(kind):
            assert field_names(kind) == tuple(f.name for f in dataclasses.fields(kind))
            seen += 1
    assert seen > 50
