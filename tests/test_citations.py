"""Every citation in mail names a rule as it is now: renumbered, or repealed (109, 101).

Each test plays a game whose seed rules have all been renumbered, or whose mutable rules have
all been repealed, then renders every kind of mail (the notices of a played game, the rare
ones, and every reply line) in both languages, and reads every rule citation in it: each must
name a rule in force by its number now, unless it says "formerly N" of a rule's old number or
"former rule N, repealed" of a repealed one.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from referee import rulebook
from referee.core import engine
from referee.core.events import (
    Accuse,
    Agree,
    Award,
    Command,
    Crown,
    Extend,
    GiveRuling,
    NameChampion,
    Notice,
    OpenAppeal,
    Outcome,
    Propose,
    Query,
    QueryKind,
    Quit,
    Reason,
    Revise,
    Vote,
)
from referee.core.mechanics import Mechanic, citations
from referee.core.model import GameState, HistoryEntry, ProposalKind, Rule
from referee.mail.render import Renderer
from tests.helpers import ADA, BOB, CARLA, DAY, PLAYERS, T0, Game
from tests.test_templates import DATA, REASON_DATA, SAMPLES

LANGUAGES = ("en", "it")
PLAIN = "A rule of the game."  # rule texts without numbers, so that only citations are read


def seeded(language: str, repeal: bool) -> GameState:
    """The seed ruleset with every rule renumbered (from 401), or with every mutable rule
    repealed and one new mutable rule enacted in their place."""
    rules: list[Rule] = []
    number = 401
    for rule in rulebook.load("builtin", language).at(T0):
        if repeal and rule.mutable:
            rules.append(replace(rule, text=PLAIN, in_force=False))
            continue
        history = (*rule.history, HistoryEntry(number, "amended", T0, proposal=number))
        rules.append(replace(rule, number=number, text=PLAIN, history=history))
        number += 1
    if repeal:
        rules.append(
            Rule(number, number, True, PLAIN, history=(HistoryEntry(number, "enacted", T0),))
        )
    state = GameState(
        name="Test Nomic",
        language=language,
        started_at=T0,
        players=PLAYERS,
        king=ADA,
        rules=tuple(rules),
        next_proposal_number=501,
    )
    return engine.start_game(state, T0).state


class Recorded(Game):
    """A game that keeps the state after each event, to read each mail as it was written."""

    def __init__(self, state: GameState) -> None:
        super().__init__(state=state)
        self.states: list[tuple[int, GameState]] = []

    def apply_tick(self, when: datetime) -> None:
        super().apply_tick(when)
        self.states.append((len(self.log), self.state))

    def do(self, command: Command, later: timedelta = timedelta(minutes=1)) -> Outcome:
        outcome = super().do(command, later)
        self.states.append((len(self.log), self.state))
        return outcome

    def state_at(self, index: int) -> GameState:
        """The state after the event whose effects include the log's entry `index`."""
        return next(state for end, state in self.states if end > index)


def played(state: GameState) -> Recorded:
    """A game that produces most notices (as in test_templates), on the given rules."""
    game = Recorded(state)
    game.log.extend(engine.start_game(state, T0).effects)
    game.states.append((len(game.log), state))
    target = next(r.number for r in state.rules_in_force if r.mutable)
    game.do(Propose(CARLA, ProposalKind.AMEND, target=target, text="Reach 50 to win."))
    game.do(Revise(CARLA, 501, "Reach 50 to win, really."))
    game.do(Extend(ADA, 0, 1))
    for who in (ADA, BOB):
        game.do(Vote(who, 501, True))
    game.clock(T0 + 10 * DAY)
    game.do(Vote(CARLA, 501, True))
    game.clock(T0 + 15 * DAY)
    game.do(Award(ADA, 3))
    game.do(OpenAppeal(ADA, "Is my award fair?"))
    game.do(NameChampion(ADA, "A1", "Bob"))
    game.do(GiveRuling(BOB, "A1", "Fair."))
    for who, yes in ((ADA, False), (CARLA, False), (BOB, True), (ADA, True)):
        game.do(Agree(who, "A1", yes))
    game.do(Accuse(BOB, "Falsified 501."))
    game.do(NameChampion(ADA, "A2", "Carla"))
    game.do(GiveRuling(CARLA, "A2", "UPHELD", verdict="upheld"))
    game.do(Agree(BOB, "A2", True))
    game.do(Agree(CARLA, "A2", True))
    game.do(Crown(ADA, "Bob"))
    game.do(Quit(ADA))
    game.clock(game.now + 3 * DAY)
    return game


def texts(game: Recorded, language: str) -> list[tuple[str, GameState]]:
    """Every kind of mail, each with the state it was written in."""
    renderer = Renderer(language, "Europe/Rome", "Nomic <Test>", "referee@nomic.example")
    state = game.state
    cites = citations(state)
    out = []
    for index, effect in enumerate(game.log):
        if isinstance(effect, Notice):
            text = renderer.render(f"notices/{effect.kind.value}", effect.data).text
            out.append((text, game.state_at(index)))
    for kind, data in SAMPLES.items():
        # a citation a sample carries itself names a rule of this state: the switch's
        data = {**data, **{key: cites["majority"] for key in ("decided", "over") if key in data}}
        out.append((renderer.render(f"notices/{kind}", {**data, "cites": cites}).text, state))
    mutable = next(r for r in state.rules_in_force if r.mutable)
    queries = [
        game.do(Query(BOB, q, mutable.number if q in (QueryKind.RULE, QueryKind.HISTORY) else None))
        for q in QueryKind
    ]
    items: list[dict[str, Any]] = [
        {"line": "", "meant": "", "ok": True, "code": q.code, "data": dict(q.data)} for q in queries
    ]
    items += [
        {"line": "", "meant": "", "ok": True, "code": code, "data": data}
        for code, data in DATA.items()
        if "rule" not in data  # a rule named by the player is echoed as written
    ]
    live = [
        {"number": r.number, "label": "I", "path": f"II/{r.number}"} for r in state.rules_in_force
    ]
    mechanics = [m.value for m in Mechanic]
    reason_data = {**REASON_DATA, "rule": mutable.number, "rules": live[:2]}
    items += [
        {"line": "", "meant": "", "ok": False, "code": r.value, "data": reason_data} for r in Reason
    ]
    items += [
        {
            "line": "",
            "meant": "",
            "ok": False,
            "code": "wrong_phase",
            "data": {**reason_data, "mechanic": m},
        }
        for m in mechanics
    ]
    reply = {"items": items, "subject": "x", "name": "Bob", "cites": cites}
    out.append((renderer.render("reply", reply).text, state))
    return out


REPEALED = re.compile(r"(?:former rule|ex regola) (\d+), (?:repealed|abrogata)")
FORMERLY = re.compile(r"(?:rule|regola) (\d+), (?:formerly|già) (\d+)", re.I)
CITED = re.compile(r"\b(?:rules?|regol[ae]) (\d+)", re.I)


def stale_citations(text: str, state: GameState) -> list[str]:
    """Citations in `text` (the parenthesised references: "(rule 212)") that name a rule not
    in force, outside the two allowed forms. A record of what happened ("Rule 418 amended by
    proposal 501; it is now rule 501") names the numbers of its day, and is not a citation."""
    in_force = {r.number for r in state.rules_in_force}
    stale = []
    for group in re.finditer(r"\(([^()]*)\)", " ".join(text.split())):
        inside = group.group(1)
        for match in REPEALED.finditer(inside):
            rule = state.rule_by_number(int(match.group(1)))
            if rule is None or rule.in_force:
                stale.append(match.group(0))
        inside = REPEALED.sub("", inside)
        for match in FORMERLY.finditer(inside):
            now, was = int(match.group(1)), int(match.group(2))
            rule = state.rule_by_number(now)
            if now not in in_force or rule is None or was not in rule.numbers:
                stale.append(match.group(0))
        inside = FORMERLY.sub("", inside)
        stale += [m.group(0) for m in CITED.finditer(inside) if int(m.group(1)) not in in_force]
    return stale


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("repeal", [False, True], ids=["renumbered", "repealed"])
def test_no_mail_cites_a_rule_not_in_force(language: str, repeal: bool) -> None:
    game = played(seeded(language, repeal))
    rendered = texts(game, language)
    cited = [m.group(0) for t, _ in rendered for m in CITED.finditer(t)]
    assert cited  # the mail does cite rules
    for text, written in rendered:
        assert stale_citations(text, written) == [], text
    joined = " ".join(" ".join(t.split()) for t, _ in rendered)
    if repeal:
        assert REPEALED.search(joined)  # "former rule 206, repealed" where it helps
    else:
        assert FORMERLY.search(joined)  # "rule 419, formerly 209"


def test_the_seed_game_cites_its_own_numbers() -> None:
    """Unchanged, the seed's rules are cited by their numbers, without "formerly"."""
    game = played_seed()
    table = citations(game.state)
    assert table["appeals"] == {"name": "212", "was": "", "state": "in_force"}
    assert table["dissent"]["name"] == "206"


def played_seed() -> Game:
    return Game()
