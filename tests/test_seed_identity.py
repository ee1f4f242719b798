"""A rule 204 of another game is not the seed's 204: mechanics come from what a ruleset declares
or what the seed's identity proves, played by mail (101, 111, 204, 206, 210, 212, 213).

A document taken in without a `ruleset.toml` may number its rules 201-215 as the seed does.
The referee does not read them as the seed's by number: a rule carries a seed mechanic only
when its text is the seed rule's own. So a club's "212. The chair keeps the minutes." grants
no appeal and its "213." no accusation, while the seed's text, taken in as a document, does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.core import mechanics
from referee.core.mechanics import Mechanic
from tests.helpers import BOB, CARLA
from tests.test_crown_handover import DONE, LANGUAGES, open_game
from tests.test_engine_edges import Clock, send

CLUB = """101. All players must obey the rules in force.

102. The rules numbered from 101 to 199 are immutable.

201. Members take turns in order of surname.

204. Members meet on Mondays.

206. Tea is served at five.

210. There may never be more than three mutable rules.

212. The chair keeps the minutes.

213. Dues are paid every year.
"""
SEED = Path(__file__).resolve().parents[1] / "ruleset" / "it" / "SOURCE.txt"  # the seed
REFUSED = {
    "en": "No rule in force grants that move (no rule of this game grants it)",
    "it": "Nessuna regola in vigore consente questa mossa (nessuna regola di questa partita ne "
    "parla)",
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_club_numbering_its_rules_like_the_seed_is_not_the_seed(
    tmp_path: Path, language: str
) -> None:
    (tmp_path / "club.md").write_text(CLUB, encoding="utf-8")
    for game in open_game(tmp_path, language, ruleset='ruleset = "club.md"'):
        clock = Clock()
        for body in ("APPEAL\nMay I?\nEND", "ACCUSE\nThe chair lied.\nEND"):
            reply = " ".join(send(game, clock, BOB, body).split())
            assert REFUSED[language] in reply, reply
        assert not mechanics.runs(game.state, Mechanic.DISSENT)  # its 206 is about tea
        assert not mechanics.runs(game.state, Mechanic.CAP)  # its 210 sets no cap we enforce
        assert mechanics.runs(game.state, Mechanic.TURNS)  # the game still moves (house)
        reply = send(game, clock, CARLA, "PROPOSE ENACT\nBiscuits too.\nEND")
        assert DONE[language] in reply, reply  # four mutable rules: no cap of 25 or 3 read in


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_seeds_own_text_taken_in_as_a_document_carries_its_mechanics(
    tmp_path: Path, language: str
) -> None:
    (tmp_path / "seed.txt").write_text(SEED.read_text(encoding="utf-8"), encoding="utf-8")
    for game in open_game(tmp_path, language, ruleset='ruleset = "seed.txt"'):
        clock = Clock()
        assert DONE[language] in send(game, clock, BOB, "APPEAL\nMay I?\nEND")
        assert DONE[language] in send(game, clock, CARLA, "ACCUSE\nThe King lied.\nEND")
        owner = mechanics.owner(game.state, Mechanic.DISSENT)
        assert owner is not None and owner.identity == 206
