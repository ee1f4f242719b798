"""Renumbering and history (109), amendments (103), parameters by precedence (111, 211)."""

from __future__ import annotations

from dataclasses import replace

from referee.core import params
from referee.core.events import Award, Propose, Vote
from referee.core.model import Phase, ProposalKind
from tests.helpers import ADA, BOB, CARLA, DAY, Game, new_game

K = ProposalKind
ALL_YES = {ADA: True, BOB: True, CARLA: True}


def adopt(game: Game, proposal: Propose) -> int:
    outcome = game.do(proposal)
    assert outcome.ok, outcome
    number = int(outcome.data["number"])
    for who, yes in ALL_YES.items():
        game.do(Vote(who, number, yes))
    game.clock(game.now + 8 * DAY)
    assert game.state.phase is Phase.AWARD
    game.do(Award(ADA, 1))
    return number


def test_a_rule_follows_its_identity_through_every_number() -> None:
    game = Game()
    adopt(
        game,
        Propose(
            CARLA,
            K.AMEND,
            target=202,
            text="v2",
            sets=(("debate_days", "7"), ("award_min", "1"), ("award_max", "10")),
        ),
    )
    adopt(game, Propose(ADA, K.ENACT_AMENDMENT, target=301, text="an amendment"))
    rule = game.state.rule_by_identity(202)
    assert rule is not None and rule.number == 302  # 109: enacting an amendment renumbers
    assert [a for a in rule.amendments] and rule.amendment_id(1) == "302.1"
    adopt(game, Propose(BOB, K.AMEND_AMENDMENT, amendment="302.1", text="amended amendment"))
    rule = game.state.rule_by_identity(202)
    assert (
        rule is not None and rule.number == 303 and rule.amendments[0].text == ("amended amendment")
    )
    adopt(game, Propose(CARLA, K.REPEAL_AMENDMENT, amendment="303.1"))
    rule = game.state.rule_by_identity(202)
    assert rule is not None and rule.number == 304 and rule.amendments == ()
    assert rule.numbers == (202, 301, 302, 303, 304)
    for old in rule.numbers:  # every old number still finds the rule
        assert game.state.rule_by_number(old) is rule
    events = [h.event for h in rule.history]
    assert events == [
        "initial",
        "amended",
        "amendment-enacted",
        "amendment-amended",
        "amendment-repealed",
    ]


def test_repeal_keeps_the_number_and_reenactment_takes_a_new_one() -> None:
    game = Game()
    adopt(game, Propose(CARLA, K.REPEAL, target=208))
    old = game.state.rule_by_identity(208)
    assert old is not None and not old.in_force and old.number == 208
    assert all(r.identity != 208 for r in game.state.rules_in_force)
    adopt(game, Propose(ADA, K.ENACT, text="Each player always has exactly one vote."))
    new = game.state.rule_by_number(302)
    assert new is not None and new.in_force and new.mutable and new.identity == 302
    assert game.do(Propose(BOB, K.AMEND, target=208, text="x")).code == "rule_repealed"


def test_transmuting_both_ways() -> None:
    game = Game()
    adopt(game, Propose(CARLA, K.TRANSMUTE, target=201))
    rule = game.state.rule_by_identity(201)
    assert rule is not None and not rule.mutable and rule.number == 301
    assert game.do(Propose(ADA, K.AMEND, target=301, text="x")).code == "rule_immutable"


def test_proposal_numbers_count_rejected_proposals_too() -> None:
    game = Game()
    game.do(Propose(CARLA, K.ENACT, text="a"))
    for who in (ADA, BOB, CARLA):
        game.do(Vote(who, 301, who != BOB))
    game.clock(game.now + 8 * DAY)
    game.do(Award(ADA, 1))
    assert game.do(Propose(ADA, K.ENACT, text="b")).data["number"] == 302


def test_immutable_rule_prevails_over_mutable_for_a_parameter() -> None:
    state = new_game()
    r209 = state.rule_by_identity(209)
    r101 = state.rule_by_identity(101)
    assert r209 is not None and r101 is not None
    state = state.with_rule(replace(r101, parameters=(("winning_score", "300"),)))
    assert params.effective(state)["winning_score"] == 300  # 111
    assert params.carrier(state, "winning_score") is not None


def test_lower_number_prevails_unless_exactly_one_claims_precedence() -> None:
    state = new_game()
    a = state.rule_by_identity(209)
    b = state.rule_by_identity(215)
    assert a is not None and b is not None
    state = state.with_rule(replace(b, parameters=(("winning_score", "70"),)))
    assert params.effective(state)["winning_score"] == 100  # 211: 209 < 215
    claim = replace(b, parameters=(("winning_score", "70"), ("precedence", "prevails")))
    assert params.effective(state.with_rule(claim))["winning_score"] == 70
    both = state.with_rule(claim).with_rule(
        replace(a, parameters=(("winning_score", "100"), ("precedence", "prevails")))
    )
    assert params.effective(both)["winning_score"] == 100  # several claims: numbers again
    defer = replace(a, parameters=(("winning_score", "100"), ("precedence", "defers")))
    assert params.effective(state.with_rule(defer))["winning_score"] == 70


def test_house_values_apply_only_where_no_rule_carries_the_parameter() -> None:
    state = new_game(house=(("voting_days", "3"), ("winning_score", "40")))
    values = params.effective(state)
    assert values["winning_score"] == 100  # rule 209 carries it
    rule = state.rule_by_identity(203)
    assert rule is not None
    state = state.with_rule(replace(rule, parameters=()))
    assert params.effective(state)["voting_days"] == 3
