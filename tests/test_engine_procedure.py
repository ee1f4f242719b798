"""The procedure of a turn: proposals, debate, votes, awards, rounds (rules 103-112, 201-210)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from referee.core import params
from referee.core.events import (
    Award,
    Command,
    Confirm,
    Extend,
    NameWinner,
    Propose,
    Query,
    QueryKind,
    Quit,
    Revise,
    SetParameter,
    Vote,
)
from referee.core.model import Adoption, Phase, Player, ProposalKind, ProposalStatus
from referee.core.order import turn_order
from tests.helpers import (
    ADA,
    BOB,
    CARLA,
    DAN,
    DAY,
    PLAYERS,
    T0,
    Game,
    new_game,
    player,
    proposal,
)

EVE = "eve@example.org"

K = ProposalKind


def vote_all(game: Game, number: int, yes: dict[str, bool]) -> None:
    for who, ballot in yes.items():
        assert game.do(Vote(who, number, ballot)).ok


def play_turn(game: Game, proposal: Propose, ballots: dict[str, bool], award: int = 5) -> int:
    outcome = game.do(proposal)
    assert outcome.ok, outcome
    number = int(outcome.data["number"])
    vote_all(game, number, ballots)
    game.clock(game.now + 8 * DAY)
    assert game.state.phase is Phase.AWARD
    assert game.do(Award(ADA, award)).ok
    return number


def test_turn_order_is_by_surname_king_included() -> None:
    state = new_game()
    assert [p.email for p in turn_order(state)] == [CARLA, ADA, BOB]  # De Santis, Lovelace, Rossi
    assert state.turn_player == CARLA
    assert state.phase is Phase.PROPOSE


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        (Propose(BOB, K.ENACT, text="x"), "not_your_turn"),
        (Propose(CARLA, K.AMEND, target=101, text="x"), "rule_immutable"),
        (Propose(CARLA, K.REPEAL, target=105), "rule_immutable"),
        (Propose(CARLA, K.ENACT_AMENDMENT, target=110, text="x"), "rule_immutable"),
        (Propose(CARLA, K.AMEND, target=999, text="x"), "unknown_rule"),
        (Propose(CARLA, K.AMEND, target=202, text="   "), "empty_text"),
        (Propose(CARLA, K.ENACT, text="x", immutable=True), "enact_immutable"),
        (Propose(CARLA, K.AMEND_AMENDMENT, amendment="202.1", text="x"), "unknown_amendment"),
        (Propose(CARLA, K.REPEAL_AMENDMENT, amendment="202.x"), "unknown_amendment"),
        (
            Propose(CARLA, K.AMEND, target=209, text="x", sets=(("winning_score", "0"),)),
            "bad_parameter",
        ),
        (
            Propose(CARLA, K.AMEND, target=209, text="x", sets=(("speed", "3"),)),
            "unknown_parameter",
        ),
        (
            Propose(CARLA, K.AMEND, target=202, text="x", sets=(("debate_days", "3"),)),
            "bad_parameter",
        ),  # 112: at least a week
        (
            Propose(CARLA, K.AMEND, target=202, text="x", sets=(("award_min", "11"),)),
            "bad_parameter",
        ),
        (
            Propose(CARLA, K.REPEAL, target=209, sets=(("winning_score", "5"),)),
            "parameter_not_allowed",
        ),
        (Vote(ADA, 301, True), "unknown_proposal"),
        (Award(ADA, 5), "wrong_phase"),
        (Award(BOB, 5), "not_king"),
        (Revise(CARLA, 301, "x"), "unknown_proposal"),
        (Confirm(ADA, 209), "no_parameter_question"),
        (SetParameter(ADA, "winning_score", "50"), "no_parameter_question"),
        (NameWinner(ADA, "Bob"), "no_tie"),
        (Query(ADA, QueryKind.RULE, 404), "unknown_rule"),
        (Vote("eve@example.org", 301, True), "not_active"),
    ],
)
def test_refusals_at_submission_take_no_number(command: Command, reason: str) -> None:
    game = Game()
    outcome = game.do(command)
    assert not outcome.ok
    assert outcome.code == reason
    assert game.state.next_proposal_number == 301  # 109: only proper proposals are numbered
    assert game.state.proposals == ()


def test_a_proposal_is_numbered_circulated_and_debated_for_a_week() -> None:
    game = Game()
    outcome = game.do(Propose(CARLA, K.AMEND, target=202, text="A turn has five parts."))
    assert outcome.ok and outcome.data["number"] == 301
    circulated = game.notices("proposal_circulated")
    assert len(circulated) == 1 and circulated[0].to == ("*",)
    assert (
        "-" in circulated[0].data["diff"]
        and "+A turn has five parts." in circulated[0].data["diff"]
    )
    p = game.state.current
    assert p is not None and p.debate_ends - p.created_at == 7 * DAY  # 112, 202
    assert p.vote_deadline - p.debate_ends == 7 * DAY
    # a second proposal in the same turn is refused and takes no number
    again = game.do(Propose(CARLA, K.ENACT, text="y"))
    assert again.code == "wrong_phase"
    assert game.state.next_proposal_number == 302


def test_votes_are_taken_from_circulation_and_the_vote_closes_after_the_debate() -> None:
    game = Game()
    game.do(Propose(CARLA, K.AMEND, target=202, text="new"))
    assert game.do(Vote(ADA, 301, False)).code == "vote_recorded"
    assert game.do(Vote(ADA, 301, True)).code == "vote_replaced"  # 203: a later vote replaces
    game.do(Vote(BOB, 301, True))
    game.do(Vote(CARLA, 301, True))
    assert game.state.phase is Phase.DEBATE  # everyone voted, but the debate week is not over
    game.clock(T0 + 7 * DAY + DAY / 24)
    assert game.state.phase is Phase.AWARD
    result = game.notices("vote_result")[-1]
    assert result.data["adopted"] is True
    assert {b["vote"] for b in result.data["ballots"]} == {"yes"}
    assert game.notices("award_prompt")[-1].to == (ADA,)


def test_abstention_counts_against_and_the_deadline_closes_the_vote() -> None:
    game = Game()
    game.do(Propose(CARLA, K.ENACT, text="Be kind."))
    game.do(Vote(ADA, 301, True))
    game.do(Vote(CARLA, 301, True))
    game.clock(T0 + 8 * DAY)
    assert game.state.phase is Phase.VOTING
    game.clock(T0 + 15 * DAY)
    reminders = game.notices("vote_reminder")
    assert game.state.phase is Phase.AWARD
    assert reminders and reminders[0].data["missing"] == ["Bob Rossi"]
    proposal = game.state.proposal(301)
    assert proposal is not None and proposal.status is ProposalStatus.REJECTED
    ballots = {b["email"]: b["vote"] for b in game.notices("vote_result")[-1].data["ballots"]}
    assert ballots[BOB] == "abstain"


def test_late_votes_are_refused_once_the_vote_is_closed() -> None:
    game = Game()
    play_turn(game, Propose(CARLA, K.ENACT, text="x"), {ADA: True, BOB: True, CARLA: True})
    assert game.do(Vote(BOB, 301, False)).code == "vote_closed"


def test_award_ends_the_turn_and_the_next_player_proposes() -> None:
    game = Game()
    play_turn(game, Propose(CARLA, K.ENACT, text="x"), {ADA: True, BOB: True, CARLA: True}, 7)
    carla = game.state.player(CARLA)
    assert carla is not None and carla.score == 7
    assert game.state.turn_player == ADA and game.state.phase is Phase.PROPOSE
    assert game.do(Award(ADA, 11)).code == "wrong_phase"


def test_award_out_of_range_is_refused() -> None:
    game = Game()
    game.do(Propose(CARLA, K.ENACT, text="x"))
    game.clock(T0 + 15 * DAY)
    assert game.do(Award(ADA, 0)).code == "award_out_of_range"
    assert game.do(Award(ADA, 11)).code == "award_out_of_range"
    assert game.do(Award(ADA, 10)).ok


def test_revision_voids_votes_and_is_circulated_again() -> None:
    game = Game()
    game.do(Propose(CARLA, K.ENACT, text="first"))
    game.do(Vote(ADA, 301, True))
    assert game.do(Revise(BOB, 301, "other")).code == "not_proposer"
    outcome = game.do(Revise(CARLA, 301, "second"))
    assert outcome.ok and outcome.data["voided"] == 1
    p = game.state.proposal(301)
    assert p is not None and p.text == "second" and p.votes == ()
    assert len(game.notices("proposal_revised")) == 1
    game.clock(T0 + 7 * DAY + DAY / 2)
    assert game.do(Revise(CARLA, 301, "third")).code == "debate_over"


def test_the_king_extends_the_debate() -> None:
    game = Game()
    game.do(Propose(CARLA, K.ENACT, text="x"))
    assert game.do(Extend(BOB, 0, 3)).code == "not_king"
    assert game.do(Extend(ADA, 301, 0)).code == "bad_days"
    assert game.do(Extend(ADA, 0, 3)).ok
    game.clock(T0 + 8 * DAY)
    assert game.state.phase is Phase.DEBATE
    game.clock(T0 + 10 * DAY + DAY / 2)
    assert game.state.phase is Phase.VOTING


def test_unanimity_then_majority_after_two_full_rounds() -> None:
    game = Game()
    for _ in range(6):  # two full rounds of three players
        proposer = game.state.turn_player
        assert proposer is not None
        play_turn(
            game,
            Propose(proposer, K.ENACT, text=f"rule by {proposer}"),
            {ADA: True, BOB: False, CARLA: True},
            1,
        )
    assert game.state.rounds_completed == 2
    assert game.state.adoption is Adoption.MAJORITY  # 204 changed by itself
    assert len(game.notices("majority_now")) == 1
    rule = game.state.rule_by_identity(204)
    assert rule is not None and rule.history[-1].event == "majority"
    # 206: the dissenter gains 10 when a proposal passes without unanimity
    bob_before = player(game.state, BOB).score
    play_turn(
        game, Propose(CARLA, K.ENACT, text="another"), {ADA: True, BOB: False, CARLA: True}, 1
    )
    assert player(game.state, BOB).score == bob_before + 10
    assert proposal(game.state, 307).status is ProposalStatus.ADOPTED


def test_amending_rule_204_keeps_unanimity() -> None:
    game = Game()
    play_turn(
        game,
        Propose(CARLA, K.AMEND, target=204, text="Unanimity, always."),
        {ADA: True, BOB: True, CARLA: True},
        1,
    )
    for _ in range(5):
        proposer = game.state.turn_player
        assert proposer is not None
        play_turn(
            game, Propose(proposer, K.ENACT, text="x"), {ADA: True, BOB: True, CARLA: True}, 1
        )
    assert game.state.rounds_completed == 2
    assert game.state.rule_204_amended
    assert game.state.adoption is Adoption.UNANIMITY


def test_transmuting_an_immutable_rule_needs_unanimity_even_under_majority() -> None:
    game = Game(state=replace(new_game(), adoption=Adoption.MAJORITY))
    play_turn(game, Propose(CARLA, K.TRANSMUTE, target=116), {ADA: True, BOB: False, CARLA: True})
    assert proposal(game.state, 301).status is ProposalStatus.REJECTED
    play_turn(game, Propose(ADA, K.TRANSMUTE, target=116), {ADA: True, BOB: True, CARLA: True})
    rule = game.state.rule_by_number(116)
    assert rule is not None and rule.mutable and rule.number == 302  # 109: renumbered


def test_cap_of_mutable_rules_is_checked_at_submission_and_adoption() -> None:
    game = Game(state=new_game(house=()))
    # lower the cap to what is in force now (15 mutable rules)
    state = game.state
    rule = state.rule_by_identity(210)
    assert rule is not None
    game.state = state.with_rule(replace(rule, parameters=(("max_mutable_rules", "15"),)))
    assert params.effective(game.state)["max_mutable_rules"] == 15
    assert game.do(Propose(CARLA, K.ENACT, text="one too many")).code == "too_many_mutable"
    assert game.do(Propose(CARLA, K.TRANSMUTE, target=101)).code == "too_many_mutable"


def test_the_last_mutable_rule_cannot_go() -> None:
    game = Game()
    state = game.state
    for rule in state.rules:
        if rule.mutable and rule.identity != 209:
            state = state.with_rule(replace(rule, in_force=False))
    game.state = state
    assert game.do(Propose(CARLA, K.REPEAL, target=209)).code == "no_mutable_left"
    assert game.do(Propose(CARLA, K.TRANSMUTE, target=209)).code == "no_mutable_left"


def test_winning_score_set_by_a_proposal_ends_the_game() -> None:
    game = Game()
    play_turn(
        game,
        Propose(
            CARLA, K.AMEND, target=209, text="Reach 10 to win.", sets=(("winning_score", "10"),)
        ),
        {ADA: True, BOB: True, CARLA: True},
        10,
    )
    assert game.state.over and game.state.winner == CARLA
    assert game.notices("winner")[-1].data["winner"] == "Carla De Santis"
    assert game.do(Vote(ADA, 301, True)).code == "game_over"


def test_two_players_crossing_together_ask_the_king() -> None:
    five = (*PLAYERS, Player("Dan Zeta", DAN, "Zeta"), Player("Eve Bianchi", EVE, "Bianchi"))
    game = Game(state=replace(new_game(players=five), adoption=Adoption.MAJORITY))
    for email in (BOB, DAN):
        game.state = game.state.with_player(replace(player(game.state, email), score=95))
    first = game.state.turn_player
    assert first == EVE  # Bianchi
    game.do(Propose(EVE, K.ENACT, text="x"))
    vote_all(game, 301, {ADA: True, BOB: False, CARLA: True, DAN: False, EVE: True})
    game.clock(game.now + 8 * DAY)
    assert proposal(game.state, 301).status is ProposalStatus.ADOPTED
    assert game.state.tie == (BOB, DAN)  # both dissenters reached 105 at once (206, 209)
    assert not game.state.over
    assert game.notices("tie_prompt")[-1].to == (ADA,)
    assert game.do(Award(ADA, 5)).code == "wrong_phase"
    assert game.do(NameWinner(ADA, "Carla")).code == "not_in_tie"
    assert game.do(NameWinner(BOB, "Rossi")).code == "not_king"
    assert game.do(NameWinner(ADA, "Rossi")).ok
    assert game.state.winner == BOB and game.state.over


def test_an_amendment_silent_on_a_parameter_asks_the_king() -> None:
    game = Game()
    play_turn(
        game,
        Propose(CARLA, K.AMEND, target=209, text="The first to 50 wins."),
        {ADA: True, BOB: True, CARLA: True},
    )
    prompt = game.notices("parameter_prompt")[-1]
    assert prompt.to == (ADA,) and prompt.data["parameters"] == [
        {"name": "winning_score", "value": "100"}
    ]
    assert game.do(SetParameter(BOB, "winning_score", "50")).code == "not_king"
    assert game.do(SetParameter(ADA, "winning_score", "0")).code == "bad_parameter"
    assert game.do(SetParameter(ADA, "winning_score", "50")).ok
    assert params.effective(game.state)["winning_score"] == 50
    assert game.state.parameter_questions == ()


def test_confirm_keeps_the_parameters() -> None:
    game = Game()
    play_turn(
        game,
        Propose(CARLA, K.ENACT_AMENDMENT, target=202, text="Awards are public."),
        {ADA: True, BOB: True, CARLA: True},
    )
    assert game.state.parameter_questions
    outcome = game.do(Confirm(ADA, 301))  # the rule's new number finds it
    assert outcome.ok and {p["name"] for p in outcome.data["parameters"]} == {
        "debate_days",
        "award_min",
        "award_max",
    }
    assert game.state.parameter_questions == ()


def test_quitting_leaves_turn_order_and_voter_count() -> None:
    game = Game()
    game.do(Propose(CARLA, K.ENACT, text="x"))
    game.do(Vote(ADA, 301, True))
    game.do(Vote(CARLA, 301, True))
    assert game.do(Quit(BOB)).ok
    assert [p.email for p in turn_order(game.state)] == [CARLA, ADA]
    game.clock(T0 + 7 * DAY + DAY / 2)
    # the two remaining voters were unanimous
    assert proposal(game.state, 301).status is ProposalStatus.ADOPTED
    assert game.do(Vote(BOB, 301, True)).code == "not_active"
    assert game.do(Query(BOB, QueryKind.SCORES)).ok  # queries still answered


def test_quitting_on_ones_own_turn_withdraws_the_proposal_and_passes_the_turn() -> None:
    game = Game()
    game.do(Propose(CARLA, K.ENACT, text="x"))
    game.do(Quit(CARLA))
    assert proposal(game.state, 301).outcome == "withdrawn"
    assert game.state.turn_player == ADA and game.state.phase is Phase.PROPOSE


def test_the_king_quitting_passes_the_crown_on() -> None:
    game = Game()
    game.do(Quit(ADA))
    assert game.state.king == BOB  # the next in turn order after Lovelace
    assert game.notices("king_crowned")[-1].data["king"] == "Bob Rossi"


def test_reminders_for_the_turn_player_daily_and_the_king_award() -> None:
    game = Game()
    game.clock(T0 + 3 * DAY + DAY / 2)
    reminders = game.notices("turn_reminder")
    assert len(reminders) == 3 and all(r.to == (CARLA,) for r in reminders)
    game.do(Propose(CARLA, K.ENACT, text="x"))
    game.clock(game.now + 16 * DAY)
    assert len(game.notices("award_reminder")) >= 1


def test_queries_answer_with_rule_history_and_new_numbers() -> None:
    game = Game()
    play_turn(
        game,
        Propose(
            CARLA,
            K.AMEND,
            target=202,
            text="New 202.",
            sets=(("debate_days", "7"), ("award_min", "1"), ("award_max", "10")),
        ),
        {ADA: True, BOB: True, CARLA: True},
    )
    rule = game.do(Query(BOB, QueryKind.RULE, 202))
    assert rule.ok and rule.data["asked"] == 202 and rule.data["rule"]["number"] == 301
    history = game.do(Query(BOB, QueryKind.HISTORY, 301))
    events = [(h["number"], h["event"]) for h in history.data["rule"]["history"]]
    assert events == [(202, "initial"), (301, "amended")]
    assert game.do(Query(BOB, QueryKind.STATUS)).data["player"] == "Ada Lovelace"


def test_a_cap_below_the_rules_in_force_is_refused_and_rechecked() -> None:
    game = Game()
    refused = game.do(
        Propose(CARLA, K.AMEND, target=210, text="At most 10.", sets=(("max_mutable_rules", "10"),))
    )
    assert refused.code == "too_many_mutable" and refused.data["cap"] == 10
    assert game.state.next_proposal_number == 301
    ok = game.do(
        Propose(CARLA, K.AMEND, target=210, text="At most 15.", sets=(("max_mutable_rules", "15"),))
    )
    assert ok.ok
