"""Benchmark: the cost of the players' mechanics on one event (issue 26; rules 101, 211).

A game with 50 adopted blocks, each with handlers on every common event (a vote, an adoption,
a turn), a win condition and a clock, next to the same game with none, in the same run: the
event is a vote (the commonest mail), decided by the engine, then the blocks' handlers of
`vote.cast` and the win conditions checked after it, as the engine runs them. Target: at most
2x the event without blocks, and at most 5 ms.

    python bench/mechanics_bench.py [--blocks 50] [--repeat 200]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from referee import rulebook
from referee.core import engine
from referee.core import interpreter as i
from referee.core import program as p
from referee.core.events import Propose, Tick, Vote
from referee.core.model import GameState, Player, ProposalKind, Rule, replace
from referee.notation import read_block

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
PLAYERS = tuple(Player(f"Player {n}", f"p{n}@example.org", f"Surname{n:02d}") for n in range(8))


def block(n: int) -> str:
    return (
        f"COUNTER c{n} FOR player START 0 MIN 0\n"
        f"ON vote.cast IF voter.c{n} < 1000: GIVE voter 1 c{n}\n"
        f"ON proposal.adopted: GIVE author 3 c{n}\n"
        f"ON turn.started: FOR EACH player p: IF p.c{n} > 10: TAKE p 1 c{n}\n"
        f"EVERY day END: GIVE king 1 c{n}\n"
        f"FOR EACH player w: WIN w WHEN w.c{n} >= 100000\n"
    )


def blocks(count: int) -> list[i.Owned]:
    made = []
    for n in range(count):
        tree = read_block(block(n), "en")
        assert isinstance(tree, p.Program), tree
        made.append(i.Owned(301 + n, 301 + n, tree))
    return made


def game() -> GameState:
    rules = rulebook.load("builtin", "en").at(T0)
    state = GameState(
        name="Bench",
        language="en",
        started_at=T0,
        players=PLAYERS,
        king=PLAYERS[0].email,
        rules=rules,
    )
    state = engine.start_game(state, T0).state
    turn = state.turn_player or PLAYERS[0].email
    proposed = Propose(turn, ProposalKind.ENACT, text="A rule.")
    state = engine.decide(state, proposed, T0 + timedelta(minutes=1)).state
    return engine.decide(state, Tick(), state.proposals[-1].debate_ends).state  # the vote opens


def best(work: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2]


def with_blocks(state: GameState, owned: list[i.Owned]) -> GameState:
    """The same game, its ruleset grown by one adopted rule per block (as adoption leaves it)."""
    for rule in owned:
        made = Rule(identity=rule.rule + 100, number=rule.rule + 100, mutable=True, text="Block.")
        state = state.with_rule(made)
    kept = i.Mechanics(
        blocks=tuple(i.Block(rule.rule + 100, rule.program) for rule in owned),
        clock=state.started_at,
    )
    return replace(state, mechanics=kept)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--blocks", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    state = game()
    proposal = state.proposals[-1].number
    voter = PLAYERS[1].email
    now = state.proposals[-1].debate_ends + timedelta(minutes=1)
    vote = Vote(voter, proposal, True)
    owned = blocks(args.blocks)
    blocked = with_blocks(state, owned)

    def bare() -> object:
        decided = engine.decide(state, vote, now)
        assert decided.effects[0].payload.code.value == "vote_recorded"  # type: ignore[union-attr]
        return decided

    def ruled() -> object:
        decided = engine.decide(blocked, vote, now)
        assert decided.state.mechanics is not None
        assert len(decided.state.mechanics.ledger.values) == args.blocks  # one each, to the voter
        return decided

    table = i.Table(
        tuple(pl.email for pl in PLAYERS), PLAYERS[0].email, b"bench", 2, now, ZoneInfo("UTC")
    )
    words: dict[str, i.Value] = {"voter": voter, "vote": True, "author": PLAYERS[0].email}

    def handlers() -> object:
        return i.happen(owned, table, i.Ledger(), "vote.cast", words)

    base = best(bare, args.repeat)
    ours = best(ruled, args.repeat)
    alone = best(handlers, args.repeat)
    print(f"{'one vote, decided by the engine':<40} {'ms':>8}")
    print(f"{'no blocks (baseline)':<40} {base * 1e3:>8.3f}")
    print(f"{f'{args.blocks} adopted blocks':<40} {ours * 1e3:>8.3f}")
    print(f"{'  of which the handlers and WIN checks':<40} {alone * 1e3:>8.3f}")
    print(f"{'ratio (target <= 2x, <= 5 ms)':<40} {ours / base:>8.2f}x")


if __name__ == "__main__":
    main()
