"""Appeals, Champions, rulings and the hold on the next turn (212); deposition (213, 214); 215."""

from __future__ import annotations

from referee.core.events import (
    EVERYONE,
    Accuse,
    Agree,
    Award,
    Crown,
    GiveRuling,
    NameChampion,
    OpenAppeal,
    Propose,
    Vote,
)
from referee.core.model import Appeal, AppealStatus, GameState, Phase, ProposalKind
from tests.helpers import ADA, BOB, CARLA, DAY, Game, player


def appeal(state: GameState, appeal_id: str) -> Appeal:
    found = state.appeal(appeal_id)
    assert found is not None
    return found


K = ProposalKind


def test_an_appeal_is_judged_by_the_king_and_settled_by_a_majority() -> None:
    game = Game()
    opened = game.do(OpenAppeal(BOB, "May Carla propose two changes at once?"))
    assert opened.ok and opened.data["id"] == "A1"
    assert game.state.judge_of(appeal(game.state, "A1")) == ADA
    assert game.do(Agree(BOB, "A1", True)).code == "no_ruling_yet"
    assert game.do(GiveRuling(BOB, "A1", "Yes.")).code == "not_judge"
    assert game.do(GiveRuling(ADA, "A1", "No: one change per turn (202).")).ok
    game.do(Agree(BOB, "A1", False))
    game.do(Agree(CARLA, "A1", False))
    assert game.notices("ruling_failed")  # a majority disagrees
    assert game.do(GiveRuling(ADA, "a1", "One change, but it may have parts.")).ok
    ruled = appeal(game.state, "A1")
    assert ruled.agree == () and ruled.rulings == 2
    game.do(Agree(BOB, "A1", True))
    assert appeal(game.state, "A1").status is AppealStatus.OPEN
    game.do(Agree(CARLA, "A1", True))
    assert appeal(game.state, "A1").status is AppealStatus.SETTLED
    assert game.do(Agree(ADA, "A1", True)).code == "appeal_settled"


def test_the_next_turn_waits_for_a_settlement() -> None:
    game = Game()
    game.do(Propose(CARLA, K.ENACT, text="x"))
    game.do(OpenAppeal(BOB, "Is proposal 301 two changes?"))
    for who in (ADA, BOB, CARLA):
        game.do(Vote(who, 301, True))
    game.clock(game.now + 8 * DAY)
    game.do(Award(ADA, 3))
    assert game.state.phase is Phase.APPEAL
    assert game.do(Propose(ADA, K.ENACT, text="y")).code == "appeal_pending"
    game.do(GiveRuling(ADA, "A1", "It is one change."))
    game.do(Agree(ADA, "A1", True))
    game.do(Agree(CARLA, "A1", True))
    assert game.state.phase is Phase.PROPOSE and game.state.turn_player == ADA


def test_the_king_appealing_names_a_champion() -> None:
    game = Game()
    game.do(OpenAppeal(ADA, "Was my award legal?"))
    assert game.state.judge_of(appeal(game.state, "A1")) is None
    assert game.notices("champion_prompt")[-1].to == (ADA,)
    assert game.do(NameChampion(BOB, "A1", "Carla")).code == "not_king"
    assert game.do(NameChampion(ADA, "A1", "Ada Lovelace")).code == "king_cannot_judge"
    assert game.do(NameChampion(ADA, "A1", "nobody")).code == "unknown_player"
    assert game.do(NameChampion(ADA, "A1", "carla@example.org")).ok
    assert game.do(NameChampion(ADA, "A1", "Bob")).code == "judge_already_named"
    assert game.do(GiveRuling(CARLA, "A1", "It was.")).ok


def test_an_upheld_accusation_deposes_the_king_who_crowns_a_successor() -> None:
    game = Game()
    assert game.do(Accuse(ADA, "I accuse myself")).code == "king_cannot_accuse"
    assert game.do(Accuse(BOB, "The result of 301 was falsified.")).ok
    game.do(NameChampion(ADA, "A1", "Carla"))
    assert game.do(GiveRuling(CARLA, "A1", "The replay agrees with him.")).code == (
        "verdict_needed"
    )
    game.do(GiveRuling(CARLA, "A1", "UPHELD: the replay differs.", verdict="upheld"))
    game.do(Agree(BOB, "A1", True))
    game.do(Agree(CARLA, "A1", True))
    ada = game.state.player(ADA)
    assert ada is not None and ada.score == -100  # 213
    assert game.state.king is None and game.state.deposed == ADA
    assert game.notices("crown_prompt")[-1].to == (ADA,)
    assert game.do(Crown(BOB, "Bob")).code == "not_deposed"
    assert game.do(Crown(ADA, "Ada")).code == "cannot_crown_self"
    assert game.do(Crown(ADA, "Rossi")).ok
    assert game.state.king == BOB and game.state.deposed is None  # 214: one King
    scores = game.notices("scores")
    assert scores and scores[-1].to == EVERYONE  # the new scores went to everyone (205)
    assert not game.notices("ruleset")  # the rules did not change: no ruleset again


def test_a_dismissed_accusation_changes_nothing() -> None:
    game = Game()
    game.do(Accuse(BOB, "Falsified."))
    game.do(NameChampion(ADA, "A1", "Carla"))
    game.do(GiveRuling(CARLA, "A1", "DISMISSED", verdict="dismissed"))
    game.do(Agree(BOB, "A1", True))
    game.do(Agree(CARLA, "A1", True))
    assert game.state.king == ADA
    assert player(game.state, ADA).score == 0


def test_a_ruling_that_play_cannot_continue_ends_the_game_under_215() -> None:
    game = Game()
    game.do(OpenAppeal(CARLA, "Rule 301 makes every proposal illegal."))
    game.do(GiveRuling(ADA, "A1", "IMPOSSIBLE Bob", impossible="Bob"))
    game.do(Agree(ADA, "A1", True))
    game.do(Agree(CARLA, "A1", True))
    assert game.state.over and game.state.winner == BOB
    assert game.notices("winner")[-1].data["rule"] == "impossible"
