"""Properties that hold in any game, whatever players send (109, 115, 201, 209, 210, 214)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.core import codec, engine, params
from referee.core.events import (
    Accuse,
    Agree,
    Award,
    Confirm,
    Crown,
    Enrol,
    Event,
    Extend,
    GiveRuling,
    NameChampion,
    OpenAppeal,
    Propose,
    Quit,
    Revise,
    Tick,
    Vote,
)
from referee.core.model import GameState, ProposalKind
from tests.helpers import ADA, BOB, CARLA, T0, new_game

WHO = st.sampled_from([ADA, BOB, CARLA, "@turn", "@turn", "@king"])  # @: resolved per state
RULE = st.sampled_from([101, 109, 116, 201, 202, 204, 208, 209, 210, 215, 301, 302, 303, 305])
NUMBER = st.one_of(st.just(0), st.just(0), st.integers(min_value=300, max_value=306))
APPEAL = st.sampled_from(["A1", "A2", "A3"])
SETS = st.lists(
    st.tuples(
        st.sampled_from(["winning_score", "award_max", "debate_days", "x"]),
        st.sampled_from(["0", "5", "8", "50", "abc"]),
    ),
    max_size=2,
).map(tuple)

GOOD_PROPOSAL = st.builds(
    Propose,
    st.just("@turn"),
    st.sampled_from(
        [
            ProposalKind.ENACT,
            ProposalKind.AMEND,
            ProposalKind.REPEAL,
            ProposalKind.TRANSMUTE,
            ProposalKind.ENACT_AMENDMENT,
        ]
    ),
    st.sampled_from([202, 203, 204, 206, 209, 210, 116, 301, 302]),
    st.just(None),
    st.just("A proper text."),
    st.sampled_from([(), (), (("winning_score", "30"),), (("max_mutable_rules", "16"),)]),
    st.just(False),
)
COMMANDS = st.one_of(
    GOOD_PROPOSAL,
    GOOD_PROPOSAL,
    st.builds(
        Propose,
        WHO,
        st.sampled_from(list(ProposalKind)),
        RULE,
        st.sampled_from(["202.1", "301.1", "303.1", "1.1"]),
        st.sampled_from(["", "A new rule text.", "Another text"]),
        SETS,
        st.booleans(),
    ),
    st.builds(Vote, WHO, NUMBER, st.booleans()),
    st.builds(Vote, st.just("@all"), st.just(0), st.booleans()),  # every player votes alike
    st.builds(Vote, st.just("@all"), st.just(0), st.just(True)),
    st.builds(Award, WHO, st.integers(min_value=0, max_value=12)),
    st.builds(Award, st.just(ADA), st.integers(min_value=1, max_value=10)),
    st.builds(Revise, WHO, NUMBER, st.sampled_from(["", "revised"])),
    st.builds(Extend, WHO, st.sampled_from([0, 301]), st.integers(min_value=0, max_value=3)),
    st.builds(OpenAppeal, WHO, st.just("Is this legal?")),
    st.builds(Accuse, WHO, st.just("Falsified.")),
    st.builds(NameChampion, WHO, APPEAL, st.sampled_from(["Bob", "Carla", "Ada"])),
    st.builds(
        GiveRuling, WHO, APPEAL, st.just("Settled."), st.sampled_from([None, "upheld", "dismissed"])
    ),
    st.builds(Agree, WHO, APPEAL, st.booleans()),
    st.builds(Crown, WHO, st.sampled_from(["Bob", "Carla", "Ada"])),
    st.builds(Confirm, WHO, RULE),
    st.builds(Quit, st.sampled_from([BOB, CARLA])),
)
PROCEDURE = st.one_of(  # the turn machinery alone, so that many turns and rounds are played
    GOOD_PROPOSAL,
    st.builds(Vote, st.just("@all"), st.just(0), st.booleans()),
    st.builds(Vote, WHO, NUMBER, st.booleans()),
    st.builds(Award, st.just("@king"), st.integers(min_value=1, max_value=10)),
    st.builds(Revise, st.just("@turn"), st.just(0), st.just("revised")),
)
WHOLE_TURN = st.tuples(GOOD_PROPOSAL, st.booleans(), st.integers(min_value=1, max_value=10)).map(
    lambda t: [
        (t[0], 5),
        (Vote("@all", 0, t[1]), 5),
        (Tick(), 60 * 24 * 8),
        (Award("@king", t[2]), 9),
    ]
)
PROCEDURE_STEP = st.one_of(
    WHOLE_TURN,
    st.tuples(
        st.one_of(PROCEDURE, st.just(Tick())), st.integers(min_value=0, max_value=60 * 24 * 9)
    ).map(lambda step: [step]),
)
PROCEDURE_GAME = st.lists(PROCEDURE_STEP, min_size=3, max_size=40).map(
    lambda chunks: [step for chunk in chunks for step in chunk]
)
STEP = st.tuples(
    st.one_of(COMMANDS, st.just(Tick())),
    st.integers(min_value=0, max_value=60 * 24 * 9),  # minutes to wait first
)


def resolve(event: Event, state: GameState) -> Event:
    """Stand-ins: @turn is whoever's turn it is, @king the King, number 0 the current proposal."""
    if isinstance(event, Tick | Enrol):
        return event
    sender = event.sender
    if sender == "@turn":
        sender = state.turn_player or ADA
    elif sender == "@king":
        sender = state.king or ADA
    event = replace(event, sender=sender)
    if isinstance(event, Vote | Revise) and event.number == 0:
        event = replace(event, number=state.current_proposal or 301)
    return event


def run(steps: list[tuple[Event, int]]) -> list[tuple[Event, GameState, GameState]]:
    state = new_game()
    now = T0
    trace: list[tuple[Event, GameState, GameState]] = []
    for event, wait in steps:
        now += timedelta(minutes=wait)
        while (due := engine.next_deadline(state)) is not None and due <= now:
            before = state
            state = engine.decide(state, Tick(), due).state
            trace.append((Tick(), before, state))
        events = [event]
        if isinstance(event, Vote) and event.sender == "@all":
            events = [replace(event, sender=p.email) for p in state.active_players]
        for one in events:
            before = state
            one = resolve(one, state)
            state = engine.decide(state, one, now).state
            trace.append((one, before, state))
    return trace


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.lists(STEP, min_size=1, max_size=60), PROCEDURE_GAME))
def test_invariants_hold_in_any_game(steps: list[tuple[Event, int]]) -> None:
    trace = run(steps)
    for event, before, after in trace:
        numbers = [p.number for p in after.proposals]
        assert numbers == list(range(301, 301 + len(numbers)))  # 109: each next, none reused
        assert after.next_proposal_number == 301 + len(numbers)
        cap = params.effective(after)["max_mutable_rules"]
        assert 1 <= after.mutable_count <= cap  # 115, 210
        current_numbers = [r.number for r in after.rules]
        assert len(set(current_numbers)) == len(current_numbers)
        if after.king is not None:  # 214: one King, a player in the game
            king = after.player(after.king)
            assert king is not None
        assert not (after.king is not None and after.deposed is not None)
        changed = {
            p.email
            for p, q in zip(before.players, after.players, strict=True)
            if p.score != q.score
        }
        if changed:  # scores move only by awards, dissent bonuses and deposition
            assert isinstance(event, Award | Vote | Tick | Quit | Agree)
        dropped = [
            p for p, q in zip(before.players, after.players, strict=True) if q.score < p.score
        ]
        if dropped:
            assert isinstance(event, Agree) and len(dropped) == 1
        if before.over:
            assert after.players == before.players and after.rules == before.rules


@settings(max_examples=40, deadline=None)
@given(st.lists(STEP, min_size=1, max_size=40))
def test_the_state_survives_serialisation_and_replays_identically(
    steps: list[tuple[Event, int]],
) -> None:
    trace = run(steps)
    final = trace[-1][2]
    assert codec.state_from_data(codec.state_to_data(final)) == final
    again = run(steps)[-1][2]
    assert again == final
    for event, _, _ in trace:
        assert codec.event_from_data(codec.event_to_data(event)) == event
