"""Property: between random moves a random rule is repealed or renumbered, and no mechanic of a
repealed rule acts and no mail cites a number not in force (101, 109, 206, 212, 213, 215).

Hypothesis draws a game: each step is a player's move (a proposal, votes, an award, an appeal,
an accusation, a ruling, agreement) or days passing, or a change to the rules as an adopted
proposal would leave them (a rule repealed, or renumbered to the next proposal number). After
each step, every notice the step wrote is checked against the state it was written in.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from referee.core import engine, mechanics
from referee.core.events import (
    Accuse,
    Agree,
    Award,
    Command,
    GiveRuling,
    NameChampion,
    Notice,
    OpenAppeal,
    Propose,
    Tick,
    Vote,
)
from referee.core.mechanics import Mechanic
from referee.core.model import Adoption, GameState, HistoryEntry, ProposalKind
from referee.mail.render import Renderer
from tests.helpers import ADA, BOB, CARLA, DAY, T0, new_game
from tests.test_citations import stale_citations

PLAYERS = (ADA, BOB, CARLA)
RENDER = {
    lang: Renderer(lang, "Europe/Rome", "N", "referee@nomic.example") for lang in ("en", "it")
}

steps = st.lists(
    st.one_of(
        st.tuples(st.just("propose"), st.booleans()),
        st.tuples(st.just("vote"), st.sampled_from(PLAYERS), st.booleans()),
        st.tuples(st.just("days"), st.integers(1, 9)),
        st.tuples(st.just("award"), st.integers(1, 10)),
        st.tuples(st.just("appeal"), st.sampled_from(PLAYERS)),
        st.tuples(st.just("accuse"), st.sampled_from((BOB, CARLA))),
        st.tuples(st.just("rule"), st.sampled_from(("upheld", "impossible", "plain"))),
        st.tuples(st.just("agree"), st.sampled_from(PLAYERS)),
        st.tuples(st.just("repeal"), st.integers(201, 215)),
        st.tuples(st.just("renumber"), st.integers(101, 215)),
    ),
    min_size=5,
    max_size=30,
)


def command(state: GameState, step: tuple[object, ...]) -> Command | None:
    kind = step[0]
    appeal = state.open_appeals[-1] if state.open_appeals else None
    if kind == "propose" and state.turn_player:
        return Propose(state.turn_player, ProposalKind.ENACT, text="A new rule.")
    if kind == "vote" and state.current_proposal:
        return Vote(str(step[1]), state.current_proposal, bool(step[2]))
    if kind == "award" and state.king:
        return Award(state.king, int(str(step[1])))
    if kind == "appeal":
        return OpenAppeal(str(step[1]), "Is this legal?")
    if kind == "accuse":
        return Accuse(str(step[1]), "The King falsified a count.")
    if kind == "rule" and appeal is not None:
        judge = state.judge_of(appeal)
        if judge is None and state.king:
            others = [p for p in PLAYERS if p != state.king and p not in appeal.parties]
            return NameChampion(state.king, appeal.id, others[0]) if others else None
        verdict = "upheld" if appeal.kind.value == "accusation" else None
        impossible = "Bob" if step[1] == "impossible" else None
        return GiveRuling(
            judge or ADA, appeal.id, "So ruled.", verdict=verdict, impossible=impossible
        )
    if kind == "agree" and appeal is not None:
        return Agree(str(step[1]), appeal.id, True)
    return None


def changed(state: GameState, step: tuple[object, ...], at: object) -> GameState:
    """The rules as an adopted repeal or amendment would leave them (109: a new number)."""
    rule = state.rule_by_identity(int(str(step[1])))
    if rule is None or not rule.in_force:
        return state
    if step[0] == "repeal":
        if state.mutable_count <= 1 or not rule.mutable:
            return state
        return state.with_rule(replace(rule, in_force=False))
    number = state.next_proposal_number
    entry = HistoryEntry(number, "amended", state.started_at, proposal=number)
    renumbered = replace(rule, number=number, history=(*rule.history, entry))
    return replace(state.with_rule(renumbered), next_proposal_number=number + 1)


def check(before: GameState, after: GameState, notices: list[Notice]) -> None:
    for notice in notices:
        kind = notice.kind.value
        if kind == "king_deposed":
            assert mechanics.runs(after, Mechanic.DEPOSITION)
        if kind == "winner" and notice.data["rule"] == "impossible":
            assert mechanics.runs(after, Mechanic.IMPOSSIBLE)
        for change in (notice.data.get("changes") or {}).get("scores", []):  # None: none
            if change["mechanic"] == "dissent":
                assert mechanics.runs(after, Mechanic.DISSENT)
        for cited in notice.cites.values():
            if cited["state"] == "in_force" and cited["name"].isdigit():
                assert int(cited["name"]) in {r.number for r in after.rules_in_force}
        for renderer in RENDER.values():
            text = renderer.render(f"notices/{kind}", notice.data).text
            assert stale_citations(text, after) == [], text


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(steps, st.booleans())
@example(  # a ruling that the game is impossible ends it with no score changes (205, 213)
    [("propose", True), ("appeal", BOB), ("rule", "impossible"), ("agree", ADA), ("agree", BOB)],
    False,
)
def test_no_repealed_mechanic_acts_and_no_mail_cites_a_rule_not_in_force(
    plan: list[tuple[object, ...]], majority: bool
) -> None:
    state = new_game()
    if majority:
        state = replace(state, adoption=Adoption.MAJORITY)
    now = T0
    for step in plan:
        if state.over:
            break
        if step[0] in ("repeal", "renumber"):
            state = changed(state, step, now)
            continue
        if step[0] == "days":
            now += DAY * int(str(step[1]))
            event: Command | Tick | None = Tick()
        else:
            now += timedelta(minutes=1)
            event = command(state, step)
        if event is None:
            continue
        decision = engine.decide(state, event, now)
        notices = [e for e in decision.effects if isinstance(e, Notice)]
        check(state, decision.state, notices)
        state = decision.state
