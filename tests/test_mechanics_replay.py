"""Random valid blocks and random play through the engine replay to the same state digest,
and no block, however written, raises out of the engine (issue 26; 213: replay proves)."""

from __future__ import annotations

from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.core import chain, codec
from referee.core import program as p
from referee.core.check import check
from referee.core.events import Act, Award, Propose, Vote
from referee.core.model import ProposalKind
from referee.notation import read
from tests.helpers import ADA, BOB, CARLA, Game
from tests.notation_blocks import SCOPE
from tests.test_engine_rules import ALL_YES
from tests.test_interpreter_properties import blocks

PLAYERS = (ADA, BOB, CARLA)
plays = st.lists(
    st.tuples(st.sampled_from(["act", "adopt", "wait"]), st.integers(0, 2), st.integers(0, 2)),
    max_size=5,
)


def adopt(game: Game, proposal: Propose) -> None:
    """The block's rule adopted by every vote; a WIN already true ends the game at adoption,
    else the King awards the proposer as after any adoption."""
    outcome = game.do(proposal)
    assert outcome.ok, outcome
    for who, yes in ALL_YES.items():
        game.do(Vote(who, int(outcome.data["number"]), yes))
    game.clock(game.now + timedelta(days=8))
    if not game.state.over:
        game.do(Award(ADA, 1))


def play(text: str, steps: list[tuple[str, int, int]]) -> Game:
    game = Game()
    program = read(text, "en")
    assert isinstance(program, p.Program), program
    adopt(game, Propose(CARLA, ProposalKind.ENACT, text=text, program=program))
    for kind, who, other in steps:
        if game.state.over:
            break
        if kind == "act":
            game.do(Act(PLAYERS[who], "grab", (PLAYERS[other].split("@")[0],)))
        elif kind == "wait":
            game.clock(game.now + timedelta(days=3 + 5 * other))
        elif game.state.turn_player is not None and game.state.current is None:
            made = game.do(Propose(game.state.turn_player, ProposalKind.ENACT, text="Prose."))
            if made.ok:
                for voter in PLAYERS:
                    game.do(Vote(voter, int(made.data["number"]), True))
    return game


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks(), plays)
def test_random_blocks_replay_to_the_same_digest_through_the_engine(
    block: str, steps: list[tuple[str, int, int]]
) -> None:
    text = f"A rule of the players.\nMECHANICS\n{block}"
    program = read(text, "en")
    assert isinstance(program, p.Program) and check(program, SCOPE) == []
    first = play(text, steps)
    second = play(text, steps)
    assert chain.StateDigest()(first.state) == chain.StateDigest()(second.state)
    assert codec.state_from_data(codec.state_to_data(first.state)) == first.state
