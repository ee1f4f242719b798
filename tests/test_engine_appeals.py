"""Appeals, Champions, rulings and the hold on the next turn (212); deposition (213, 214); 215."""

from __future__ import annotations

from datetime import UTC, datetime

from referee.core.engine import next_deadline
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
    Quit,
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


# ----- the daily limit: appeals beyond it wait for the next day (212) ----------------------


def limited(sender: str, question: str, per_day: int = 2, may_wait: int = 3) -> OpenAppeal:
    return OpenAppeal(sender, question, per_day=per_day, may_wait=may_wait)


def test_appeals_beyond_the_days_limit_open_on_later_days_in_the_order_they_came() -> None:
    game = Game()
    said = [game.do(limited(BOB, f"Question {n}?")).code for n in range(5)]
    assert said == ["appeal_opened"] * 2 + ["appeal_waiting"] * 3
    third = game.do(limited(CARLA, "Carla's own?"))  # another player is not held
    assert third.code == "appeal_opened"
    assert [w.question for w in game.state.waiting_of(BOB)] == [f"Question {n}?" for n in (2, 3, 4)]
    # two a day: the third and fourth open at the next midnight UTC, the fifth a day later
    midnight = datetime(2026, 12, 2, tzinfo=UTC)
    opens = [w.opens_at for w in game.state.waiting_of(BOB)]
    assert opens == [midnight, midnight, midnight + DAY]
    assert next_deadline(game.state) == midnight
    assert game.do(limited(BOB, "One too many?")).code == "appeals_daily_limit"
    game.clock(midnight)
    opened = [a for a in game.state.appeals if a.appellant == BOB]
    assert [a.question for a in opened][2:] == ["Question 2?", "Question 3?"]
    assert all(a.opened_at == midnight and a.asked_at is not None for a in opened[2:])
    assert [a.id for a in opened[2:]] == ["A4", "A5"]  # numbered as they open
    # the new day's two are taken by the ones that waited: a new appeal waits behind them
    assert game.do(limited(BOB, "And today?")).code == "appeal_waiting"
    assert [w.opens_at for w in game.state.waiting_of(BOB)] == [midnight + DAY] * 2
    game.clock(midnight + DAY)
    assert not game.state.waiting_appeals and len(game.state.appeals) == 7
    assert game.notices("appeal_opened")[-1].data["appeal"]["asked"] is not None


def test_with_no_room_to_wait_an_appeal_past_the_limit_is_refused() -> None:
    game = Game()
    game.do(limited(BOB, "First?", per_day=1, may_wait=0))
    refused = game.do(limited(BOB, "Second?", per_day=1, may_wait=0))
    assert refused.code == "appeals_daily_limit" and refused.data["waiting"] == 0
    assert refused.data["next"] == datetime(2026, 12, 2, tzinfo=UTC)
    assert not game.state.waiting_appeals and len(game.state.appeals) == 1
    assert game.do(OpenAppeal(BOB, "No limit given: none kept.")).ok  # per_day 0


def test_a_waiting_accusation_of_a_king_deposed_meanwhile_is_not_opened() -> None:
    game = Game()
    game.do(Accuse(BOB, "First.", per_day=1, may_wait=3))
    assert game.do(Accuse(BOB, "Ada falsified 302 too.", per_day=1, may_wait=3)).code == (
        "appeal_waiting"
    )
    assert game.state.waiting_of(BOB)[0].accused == ADA
    game.do(NameChampion(ADA, "A1", "Carla"))
    game.do(GiveRuling(CARLA, "A1", "UPHELD", verdict="upheld"))
    game.do(Agree(BOB, "A1", True))
    game.do(Agree(CARLA, "A1", True))
    game.do(Crown(ADA, "Carla"))
    game.clock(game.now + DAY)
    assert len(game.state.appeals) == 1 and not game.state.waiting_appeals
    dropped = game.notices("appeal_dropped")
    assert len(dropped) == 1 and dropped[0].to == (BOB,)
    assert dropped[0].data["reason"] == {
        "code": "accused_not_king",
        "data": {"accused": "Ada Lovelace"},
    }


def test_waiting_appeals_are_dropped_when_the_game_ends_and_taken_away_by_who_leaves() -> None:
    game = Game()
    game.do(limited(CARLA, "Rule 301 makes every proposal illegal.", per_day=1))
    game.do(limited(CARLA, "And rule 302?", per_day=1))
    game.do(limited(BOB, "Mine.", per_day=1))
    game.do(limited(BOB, "Mine again.", per_day=1))
    left = game.do(Quit(BOB))
    assert left.code == "quit_recorded" and left.data["waiting"] == 1
    assert [w.appellant for w in game.state.waiting_appeals] == [CARLA]
    game.do(GiveRuling(ADA, "A1", "IMPOSSIBLE Carla", impossible="Carla"))
    game.do(Agree(ADA, "A1", True))
    game.do(Agree(CARLA, "A1", True))
    assert game.state.over
    game.clock(game.now + DAY)  # its day comes: the game is over, so it is not opened
    assert not game.state.waiting_appeals and next_deadline(game.state) is None
    dropped = game.notices("appeal_dropped")
    assert [d.to for d in dropped] == [(CARLA,)]
    assert dropped[0].data["reason"]["code"] == "game_over"
