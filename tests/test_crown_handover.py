"""What waits for the King passes with the crown, played by mail (114, 202, 209, 212, 214).

When the King leaves (114), every judgement the office owes goes to the next King, never to the
player who left and never lost: the award of a player still in the game (202), an appeal he was
to judge (212), a parameter question (111, 211). The King who leaves during the award of his own
turn is awarded nothing: his turn is over, and the next one begins without a stray prompt.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.config import load_settings
from referee.core.model import Phase
from referee.service import Referee
from referee.store.store import Store
from tests.helpers import ADA, BOB, CARLA, DAY, T0
from tests.test_engine_edges import CONFIG, Clock, send, sent, text

LANGUAGES = ("en", "it")
DONE = {"en": "Done.", "it": "Fatto."}


def open_game(folder: Path, language: str, more: str = "", ruleset: str = "") -> Iterator[Referee]:
    """Ada (King), Bob, Carla; turn order Carla, Ada, Bob (`more`: other players)."""
    path = folder / "game.toml"
    config = CONFIG.format(more=more, ruleset=ruleset).replace(
        'language = "en"', f'language = "{language}"'
    )
    path.write_text(config, encoding="utf-8")
    settings = load_settings(path)
    store = Store(settings.database_url)
    try:
        yield Referee.create(store, settings, T0)
    finally:
        store.close()


@pytest.fixture(params=LANGUAGES)
def game(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Referee]:
    yield from open_game(tmp_path, request.param)


def language(referee: Referee) -> str:
    return referee.state.language


def to(message: object) -> str:
    return message["To"].addresses[0].addr_spec  # type: ignore[index, no-any-return]


def vote_through(referee: Referee, clock: Clock, proposal: str) -> None:
    """The turn player's proposal, everyone's YES, the debate's end: the award is next."""
    turn = referee.state.turn_player
    assert turn is not None
    assert DONE[language(referee)] in send(referee, clock, turn, proposal)
    number = referee.state.current_proposal
    for player in referee.state.active_players:
        send(referee, clock, player.email, f"VOTE {number} YES")
    clock.now += 8 * DAY
    referee.advance(clock.now)
    assert referee.state.phase is Phase.AWARD


def test_a_king_who_quits_during_his_own_award_leaves_no_prompt_behind(game: Referee) -> None:
    clock = Clock()
    vote_through(game, clock, "PROPOSE ENACT\nBe kind.\nEND")  # Carla's turn
    send(game, clock, ADA, "AWARD 3")
    assert game.state.turn_player == ADA
    vote_through(game, clock, "PROPOSE ENACT\nBe brief.\nEND")  # the King's own turn
    prompts = len(sent(game, "award_prompt"))
    assert DONE[language(game)] in send(game, clock, ADA, "QUIT")
    assert game.state.king == BOB  # the next in turn order after Ada (214, custom)
    assert len(sent(game, "award_prompt")) == prompts  # nobody is asked to award who left
    assert game.state.turn_player == BOB and game.state.phase is Phase.PROPOSE
    assert game.state.player(ADA).score == 0  # type: ignore[union-attr]


def test_the_award_of_a_player_still_playing_goes_to_the_new_king(game: Referee) -> None:
    clock = Clock()
    vote_through(game, clock, "PROPOSE ENACT\nBe kind.\nEND")  # Carla's turn
    assert to(sent(game, "award_prompt")[-1]) == ADA
    send(game, clock, ADA, "QUIT")
    assert game.state.king == BOB and game.state.phase is Phase.AWARD
    assert to(sent(game, "award_prompt")[-1]) == BOB
    assert DONE[language(game)] in send(game, clock, BOB, "AWARD 6")
    assert game.state.player(CARLA).score == 6  # type: ignore[union-attr]


def test_an_appeal_the_old_king_was_to_judge_is_the_new_kings(game: Referee) -> None:
    clock = Clock()
    send(game, clock, CARLA, "APPEAL\nMay I propose twice?\nEND")
    assert game.state.open_appeals[0].ruling is None
    send(game, clock, ADA, "QUIT")
    assert game.state.king == BOB
    crowned = text(sent(game, "king_crowned")[-1])
    said = {
        "en": "Bob Rossi now judges the open appeal A1 (rule 212)",
        "it": "ora Bob Rossi giudica l'appello aperto A1 (regola 212)",
    }[language(game)]
    assert said in crowned, crowned
    assert "RULING A1" in crowned or "SENTENZA A1" in crowned
    assert DONE[language(game)] in send(game, clock, BOB, "RULING A1\nNo, once a turn.\nEND")


def test_a_waiting_parameter_question_goes_to_the_new_king(game: Referee) -> None:
    clock = Clock()
    vote_through(game, clock, "PROPOSE AMEND 209\nThe first to 100 points wins outright.\nEND")
    asked = sent(game, "parameter_prompt")
    assert [to(m) for m in asked] == [ADA]  # the amendment said nothing of winning_score
    send(game, clock, ADA, "QUIT")
    assert game.state.king == BOB
    asked = sent(game, "parameter_prompt")
    assert [to(m) for m in asked] == [ADA, BOB]
    handed = text(asked[-1])
    said = {
        "en": "Ada Lovelace is King no more, so it is yours now",
        "it": "Ada Lovelace non è più Re, quindi ora spetta a voi",
    }[language(game)]
    assert said in handed, handed
    assert DONE[language(game)] in send(game, clock, BOB, "CONFIRM 301")
    assert not game.state.parameter_questions
