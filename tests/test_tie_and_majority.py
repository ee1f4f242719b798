"""The tie told to the table, and the rule that decides a vote named in its result, by mail
(204, 209, 211).

Players level at the winning score stop the game until the King names the winner (209): the
JSON says the phase is `tie` and every player is told, not only the King. A new rule that SETs
`majority_after_rounds` and claims precedence prevails over the rule on adoption (204, 211)
from its adoption (207): the notice and every vote result after it say which rule decided.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.core.model import Adoption, Phase
from referee.service import Referee
from tests.attack import cli
from tests.helpers import ADA, BOB, CARLA, DAN, DAY
from tests.test_crown_handover import DONE, LANGUAGES, open_game, to, vote_through
from tests.test_engine_edges import DAN_PLAYS, Clock, send, sent, text


@pytest.fixture(params=LANGUAGES)
def game4(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Referee]:
    """Ada (King), Bob, Carla, Dan; turn order Carla, Ada, Dan (Moro), Bob."""
    yield from open_game(tmp_path, request.param, DAN_PLAYS)


@pytest.fixture(params=LANGUAGES)
def game(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Referee]:
    yield from open_game(tmp_path, request.param)


def status_json(folder: Path) -> dict[str, object]:
    done = cli("status", folder / "game.toml", "--json")
    assert done.returncode == 0, done.stderr
    data: dict[str, object] = json.loads(done.stdout)
    return data


def test_a_tie_is_the_phase_tie_and_every_player_hears_of_it(
    game4: Referee, tmp_path: Path
) -> None:
    clock = Clock()
    lang = game4.state.language
    for proposal, points in (("Be kind.", 5), ("Be brief.", 1), ("Be fair.", 5)):
        vote_through(game4, clock, f"PROPOSE ENACT\n{proposal}\nEND")
        assert DONE[lang] in send(game4, clock, ADA, f"AWARD {points}")
    assert game4.state.turn_player == BOB  # Carla 5, Ada 1, Dan 5
    send(game4, clock, BOB, "PROPOSE AMEND 209\nFive points win.\nSET winning_score = 5\nEND")
    for who in (ADA, BOB, CARLA, DAN):
        send(game4, clock, who, "VOTE 304 YES")
    clock.now += 8 * DAY
    game4.advance(clock.now)
    assert set(game4.state.tie) == {CARLA, DAN} and not game4.state.over
    state = status_json(tmp_path)
    turn = state["turn"]
    assert isinstance(turn, dict) and turn["phase"] == "tie" and turn["deadline"] is None
    told = sent(game4, "tie")
    assert {to(m) for m in told} == {ADA, BOB, CARLA, DAN}  # the whole table, not the King only
    said = {
        "en": "the King, Ada Lovelace, names the winner among them (rule 304, formerly 209)",
        "it": "il Re, Ada Lovelace, nomina il vincitore fra loro (regola 304, già 209)",
    }[lang]
    body = text(told[0])
    assert said in body and "Carla De Santis: 5" in body and "Dan Moro: 5" in body, body
    shown = {"en": "tie (the King names the winner)", "it": "parità (il Re nomina il vincitore)"}
    assert shown[lang] in send(game4, clock, BOB, "STATUS")
    assert DONE[lang] in send(game4, clock, ADA, "WINNER Dan")
    assert game4.state.over and game4.state.winner == DAN


def test_a_rule_prevailing_over_204_decides_and_is_named(game: Referee) -> None:
    clock = Clock()
    lang = game.state.language
    vote_through(
        game,
        clock,
        "PROPOSE ENACT\nA majority adopts a rule change.\n"
        "SET majority_after_rounds = 0\nSET precedence = prevails\nEND",
    )
    assert game.state.adoption is Adoption.MAJORITY  # 207: at once, not at the round's end
    notice = " ".join(text(sent(game, "majority_now")[-1]).split())
    said = {
        "en": "so says rule 301, which prevails over the rule on adoption (rule 204; rule 211)",
        "it": "lo stabilisce la regola 301, che prevale sulla regola sull'adozione "
        "(regola 204; regola 211)",
    }[lang]
    assert said in notice and "not amended" not in notice, notice
    assert DONE[lang] in send(game, clock, ADA, "AWARD 2")
    assert game.state.turn_player == ADA and game.state.phase is Phase.PROPOSE
    send(game, clock, ADA, "PROPOSE ENACT\nTea at five.\nEND")
    for who, vote in ((ADA, "YES"), (BOB, "NO"), (CARLA, "YES")):
        send(game, clock, who, f"VOTE 302 {vote}")
    clock.now += 8 * DAY
    game.advance(clock.now)
    result = " ".join(text(sent(game, "vote_result")[-1]).split())
    named = {
        "en": "it needed a majority (rule 301, which prevails over rule 204)",
        "it": "(regola 301, che prevale sulla regola 204)",
    }[lang]
    assert named in result, result
    assert "Bob Rossi no" in result  # the dissenter's row, though the bonus moved his score
    assert game.state.proposal(302).status.value == "adopted"  # type: ignore[union-attr]


def test_the_seed_vote_result_cites_the_rule_on_adoption(game: Referee) -> None:
    clock = Clock()
    vote_through(game, clock, "PROPOSE ENACT\nBe kind.\nEND")
    result = " ".join(text(sent(game, "vote_result")[-1]).split())
    named = {"en": "it needed unanimity (rule 204).", "it": "(regola 204)."}
    assert named[game.state.language] in result, result
