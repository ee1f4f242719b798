"""Italian mail agrees with the rules it cites: *la regola*, *le regole*, *della regola 204*
(109, 204, 211, 212, 214).

A citation is computed ("regola 304, già 209", "ex regola 206, abrogata", "regole 212, 213",
"una regola della casa dell'arbitro"), and the sentence around it was written before it:
the test reads every Italian mail of games played by mail and by the engine, on the seed,
renumbered and repealed rules, and checks that each article or preposition agrees with the
noun that follows (feminine *regola*, plural *regole*), that a rule's number after an article
takes the feminine (*la 204*, never *il 204*), and that no article stands before a form that
brings its own (*una regola …*, *nessuna regola …*).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.service import Referee
from tests.helpers import ADA, BOB, CARLA, DAY
from tests.test_citations import played, seeded, texts
from tests.test_crown_handover import open_game, vote_through
from tests.test_engine_edges import Clock, send, sent, text

MASCULINE = r"(?:il|lo|l'|del|dello|al|allo|dal|dallo|nel|nello|sul|sullo|un|uno)"
PLURAL_MASCULINE = r"(?:i|gli|dei|degli|ai|agli|dai|dagli|nei|negli|sui|sugli)"
SINGULAR = r"(?:la|una|della|alla|dalla|nella|sulla)"
PLURAL = r"(?:le|delle|alle|dalle|nelle|sulle)"
WRONG = {
    "masculine article before regola/regole": re.compile(
        rf"\b(?:{MASCULINE}|{PLURAL_MASCULINE})\s+(?:ex\s+)?regol[ae]\b", re.I
    ),
    "plural article before regola": re.compile(rf"\b{PLURAL}\s+(?:ex\s+)?regola\b", re.I),
    "singular article before regole": re.compile(rf"\b{SINGULAR}\s+(?:ex\s+)?regole\b", re.I),
    "article before a form with its own": re.compile(
        rf"\b(?:{SINGULAR}|{PLURAL})\s+(?:una|nessuna)\s+regola\b", re.I
    ),
    "masculine article before a rule's number": re.compile(
        r"\b(?:il|del|al|dal|nel|sul)\s+\d{3}\b(?!\s*(?:punt|giorn|%))", re.I
    ),
    "repealed rule in the masculine": re.compile(r"\bregol[ae]\s+[^()]{0,12}\babrogat[oi]\b"),
}


def disagreements(mail: str) -> list[str]:
    flat = " ".join(mail.split())
    return [
        f"{name}: …{flat[max(0, m.start() - 40) : m.end() + 20]}…"
        for name, pattern in WRONG.items()
        for m in pattern.finditer(flat)
    ]


def test_the_check_finds_what_it_looks_for() -> None:
    wrong = (
        "Lo dice il regola 204. Le regola 301 vale. Secondo la regole 212, 213. "
        "Prevale sulla una regola della casa. Come dice il 204. L'ex regola 206, abrogato."
    )
    found = {d.split(":")[0] for d in disagreements(wrong)}
    assert found == set(WRONG)
    right = (
        "Lo dice la regola 204, della regola 301, sulla regola 305, già 204; le regole 212, "
        "213; la 204; ex regola 206, abrogata; il 1 dicembre; i 100 punti; (una regola della "
        "casa dell'arbitro)."
    )
    assert disagreements(right) == []


@pytest.fixture
def game(tmp_path: Path) -> Iterator[Referee]:
    yield from open_game(tmp_path, "it")


def test_italian_mail_of_a_game_played_by_mail_agrees(game: Referee) -> None:
    """The mails that compute a citation into a sentence: a rule prevailing over 204, the
    vote results it decides, the crown passing with an appeal to judge."""
    clock = Clock()
    vote_through(
        game,
        clock,
        "PROPOSE ENACT\nBasta la maggioranza.\n"
        "SET majority_after_rounds = 0\nSET precedence = prevails\nEND",
    )
    send(game, clock, ADA, "AWARD 2")
    send(game, clock, ADA, "PROPOSE ENACT\nIl tè alle cinque.\nEND")
    for who, vote in ((ADA, "SÌ"), (BOB, "NO"), (CARLA, "SÌ")):
        send(game, clock, who, f"VOTO 302 {vote}")
    clock.now += 8 * DAY
    game.advance(clock.now)
    send(game, clock, CARLA, "APPELLO\nPosso proporre due volte?\nFINE")
    send(game, clock, ADA, "ABBANDONO")
    mails = [
        text(m)
        for kind in ("majority_now", "vote_result", "king_crowned", "turn_started", "ruleset")
        for m in sent(game, kind)
    ]
    joined = " ".join(" ".join(m.split()) for m in mails)
    assert "lo stabilisce la regola 301, che prevale sulla regola sull'adozione" in joined
    assert "(regola 301, che prevale sulla regola 204)" in joined
    assert "l'appello aperto A1 (regola 212)" in joined
    for mail in mails:
        assert disagreements(mail) == [], mail


@pytest.mark.parametrize("repeal", [False, True], ids=["renumbered", "repealed"])
def test_italian_mail_after_renumbering_or_repealing_every_rule_agrees(repeal: bool) -> None:
    rendered = texts(played(seeded("it", repeal)), "it")
    joined = " ".join(" ".join(t.split()) for t, _ in rendered)
    assert ("ex regola" in joined) if repeal else (", già " in joined)
    for mail, _ in rendered:
        assert disagreements(mail) == [], mail
