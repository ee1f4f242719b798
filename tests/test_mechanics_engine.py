"""The players' mechanics in the engine: a block proposed, owned by its rule once adopted,
run at the game's events, stopped by a repeal, replaced by an amendment (issue 26; 101, 207)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from referee.core import blocks, chain, codec
from referee.core import program as p
from referee.core.events import AcceptOffer, Act, AnswerQuestion, Award, Propose, Vote
from referee.core.model import GameState, ProposalKind
from referee.notation import read
from tests.helpers import ADA, BOB, CARLA, DAY, T0, Game, new_game
from tests.notation_blocks import CINQUE, FIVE
from tests.test_engine_rules import adopt

K = ProposalKind


def enact(sender: str, prose: str, block: str, language: str) -> Propose:
    marker = "MECHANICS" if language == "en" else "MECCANICA"
    text = f"{prose}\n{marker}\n{block}"
    program = read(text, language)
    assert isinstance(program, p.Program), program
    return Propose(sender, K.ENACT, text=text, program=program)


def coins(state: GameState, who: str, name: str = "coins") -> Fraction:
    assert state.mechanics is not None
    return state.mechanics.ledger.value(name, who)


@pytest.mark.parametrize("language", ["en", "it"])
def test_the_coins_rule_pays_every_later_author_until_repealed(language: str) -> None:
    game = Game(new_game(language=language))
    block, name = (FIVE[0], "coins") if language == "en" else (CINQUE[0], "monete")
    rule = adopt(game, enact(CARLA, "Coins for authors.", block, language))
    assert coins(game.state, CARLA, name) == 0  # its own adoption does not pay
    adopt(game, Propose(ADA, K.ENACT, text="A rule of prose."))
    assert coins(game.state, ADA, name) == 40
    adopt(game, Propose(BOB, K.REPEAL, target=rule))
    assert coins(game.state, BOB, name) == 0  # repealed: its handler has stopped (101)
    assert coins(game.state, ADA, name) == 40  # what it gave stays


def test_an_amendment_replaces_the_block_and_counters_keep_their_values() -> None:
    game = Game()
    rule = adopt(game, enact(CARLA, "Coins.", FIVE[0], "en"))
    adopt(game, Propose(ADA, K.ENACT, text="Prose."))
    amended = "COUNTER coins FOR player START 0\nON proposal.adopted: GIVE author 5 coins\n"
    text = f"Fewer coins.\nMECHANICS\n{amended}"
    program = read(text, "en")
    assert isinstance(program, p.Program)
    adopt(game, Propose(BOB, K.AMEND, target=rule, text=text, program=program))
    assert coins(game.state, ADA) == 40 and coins(game.state, BOB) == 0
    adopt(game, Propose(CARLA, K.ENACT, text="More prose."))
    assert coins(game.state, CARLA) == 5


def test_points_given_by_a_block_are_the_players_score() -> None:
    game = Game()
    block = "ON vote.cast IF vote: GIVE voter 2 points\n"
    adopt(game, enact(CARLA, "Yes is worth two points.", block, "en"))
    before = {pl.email: pl.score for pl in game.state.players}
    adopt(game, Propose(ADA, K.ENACT, text="Prose."))
    after = {pl.email: pl.score for pl in game.state.players}
    assert after[BOB] == before[BOB] + 2 and after[CARLA] == before[CARLA] + 2
    assert after[ADA] == before[ADA] + 2 + 1  # and the King's award of 1 to the turn's player


def test_a_state_with_blocks_encodes_decodes_and_digests_as_its_repr() -> None:
    game = Game()
    adopt(game, enact(CARLA, "Coins.", FIVE[0], "en"))
    adopt(game, Propose(ADA, K.ENACT, text="Prose."))
    state = game.state
    assert state.mechanics is not None and state.mechanics.blocks
    data = codec.state_to_data(state)
    assert codec.state_from_data(data) == state
    assert chain.StateDigest()(state) == chain.digest(repr(state).encode("utf-8"))
    proposed = enact(BOB, "Pickpockets.", FIVE[2], "en")
    event = codec.event_from_data(codec.event_to_data(proposed))
    assert event == proposed


def test_a_game_without_blocks_keeps_no_mechanics_and_no_new_data() -> None:
    game = Game()
    adopt(game, Propose(CARLA, K.ENACT, text="Prose only."))
    assert game.state.mechanics is None
    assert "mechanics" not in codec.state_to_data(game.state)
    assert ", mechanics=" not in repr(game.state)
    assert "program" not in codec.event_to_data(Propose(CARLA, K.ENACT, text="x"))


def test_pickpocket_by_mail_once_a_day_with_the_rule_s_own_dice_in_either_game() -> None:
    for language in ("en", "it"):
        game = Game(new_game(language=language))
        adopt(game, enact(CARLA, "Coins and pickpockets.", FIVE[0] + FIVE[2], language))
        for author in (ADA, BOB, CARLA, ADA):
            adopt(game, Propose(author, K.ENACT, text=f"Prose by {author}."))
        assert coins(game.state, ADA) == 80 and coins(game.state, BOB) == 40
        refused = game.do(Act(BOB, "pickpocket", ("Carla",)))  # Carla has only 40
        assert not refused.ok and refused.data["why"] == "require"
        done = game.do(Act(BOB, "PICKPOCKET", ("Ada",)))
        assert done.ok, done
        bob, ada, pot = coins(game.state, BOB), coins(game.state, ADA), coins(game.state, "game")
        assert (bob, ada, pot) in ((47, 73, 0), (36, 80, 4))
        assert done.data["moved"]
        again = game.do(Act(BOB, "pickpocket", ("Ada",)))
        assert not again.ok and again.data["why"] == "limit"


@pytest.mark.parametrize("language", ["en", "it"])
def test_transfer_is_offered_then_accepted_by_the_receiver(language: str) -> None:
    game = Game(new_game(language=language))
    adopt(game, enact(CARLA, "Gifts of points.", FIVE[3], language))
    before = {pl.email: pl.score for pl in game.state.players}
    offered = game.do(Act(CARLA, "transfer", ("Bob", "1")))
    assert offered.ok and offered.code == "action_offered", offered
    assert {pl.email: pl.score for pl in game.state.players} == before
    wrong = game.do(AcceptOffer(ADA, offered.data["number"]))
    assert not wrong.ok and wrong.data["why"] == "no_offer"
    accepted = game.do(AcceptOffer(BOB, offered.data["number"]))
    assert accepted.ok, accepted
    after = {pl.email: pl.score for pl in game.state.players}
    assert after[CARLA] == before[CARLA] - 1 and after[BOB] == before[BOB] + 1


@pytest.mark.parametrize("language", ["en", "it"])
def test_the_king_answers_the_rule_s_question_and_a_tenth_of_a_point_follows(
    language: str,
) -> None:
    game = Game(new_game(language=language))
    adopt(game, enact(CARLA, "Quotations are worth a tenth.", FIVE[4], language))
    assert game.state.mechanics is not None and not game.state.mechanics.ledger.questions
    adopt(game, Propose(ADA, K.ENACT, text="“To be or not to be” (Shakespeare, Hamlet)."))
    assert game.state.mechanics is not None
    (question,) = game.state.mechanics.ledger.questions
    score = next(pl.score for pl in game.state.players if pl.email == ADA)
    not_king = game.do(AnswerQuestion(BOB, question.number, True))
    assert not not_king.ok
    answered = game.do(AnswerQuestion(ADA, question.number, True))
    assert answered.ok, answered
    assert coins(game.state, ADA, "points") == score + Fraction(1, 10)
    assert game.state.mechanics.ledger.questions == ()


@pytest.mark.parametrize("language", ["en", "it"])
def test_spendies_reset_and_paid_on_the_game_s_clock(language: str) -> None:
    game = Game(new_game(language=language))
    adopt(game, enact(CARLA, "Spending money.", FIVE[1], language))
    assert coins(game.state, ADA, "spendies") == 0
    game.clock(T0.replace(year=2027, month=1, day=2))
    assert [coins(game.state, who, "spendies") for who in (ADA, BOB, CARLA)] == [20, 20, 20]
    game.clock(T0.replace(year=2027, month=3, day=1, hour=12))  # two more month ends, starts
    assert coins(game.state, BOB, "spendies") == 20
    assert game.state.mechanics is not None and game.state.mechanics.clock is not None


def test_a_rule_s_win_ends_the_game_and_cites_the_rule() -> None:
    game = Game()
    block = "COUNTER coins FOR player START 0\nON proposal.adopted: GIVE author 60 coins\n"
    block += "FOR EACH player p: WIN p WHEN p.coins >= 100\n"
    rule = adopt(game, enact(CARLA, "The rich win.", block, "en"))
    adopt(game, Propose(ADA, K.ENACT, text="Prose."))
    assert not game.state.over
    outcome = game.do(Propose(BOB, K.ENACT, text="More prose."))
    for who in (ADA, BOB, CARLA):
        game.do(Vote(who, int(outcome.data["number"]), True))
    game.clock(game.now + 8 * DAY)
    assert not game.state.over  # Bob has 60
    game.do(Award(ADA, 1))
    outcome = game.do(Propose(CARLA, K.ENACT, text="Carla's prose."))
    for who in (ADA, BOB, CARLA):
        game.do(Vote(who, int(outcome.data["number"]), True))
    game.clock(game.now + 8 * DAY)
    game.do(Award(ADA, 1))
    outcome = game.do(Propose(ADA, K.ENACT, text="Ada again."))
    for who in (ADA, BOB, CARLA):
        game.do(Vote(who, int(outcome.data["number"]), True))
    game.clock(game.now + 8 * DAY)
    assert game.state.over and game.state.winner == ADA  # 120 coins
    (won,) = game.notices("winner")
    assert won.payload.rule == "block"
    assert won.cites["block"]["name"] == str(rule)


def test_counters_actions_and_questions_as_the_mail_side_shows_them() -> None:
    game = Game()
    rule = adopt(game, enact(CARLA, "Coins, a pot and a question.", FIVE[0] + FIVE[2], "en"))
    adopt(game, Propose(ADA, K.ENACT, text="Prose."))
    shown = blocks.counters_data(game.state)
    assert shown == {"coins": {ADA: 40, BOB: 0, CARLA: 0}}
    assert blocks.actions_data(game.state) == [
        {
            "command": "PICKPOCKET",
            "syntax": "PICKPOCKET <target>",
            "rule": str(rule),
            "by": "player",
        }
    ]
    assert blocks.questions_data(game.state) == []
    assert blocks.counters_data(Game().state) == {}
