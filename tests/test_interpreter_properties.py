"""Random valid blocks and random play: deterministic, never an error, never past the budget.

Issue 26: "no block, however written, raises an error out of the interpreter or runs past its
budget", and the same play replays to the same result (the dice are keyed, never the clock).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from fractions import Fraction
from zoneinfo import ZoneInfo

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.core import interpreter as i
from referee.core import program as p
from referee.core.check import check
from referee.notation import read_block
from tests.notation_blocks import SCOPE

PLAYERS = ("ada@example.org", "bob@example.org", "carla@example.org")
START = datetime(2026, 12, 1, 9, tzinfo=UTC)
EVENTS = ("proposal.adopted", "proposal.made", "turn.started", "vote.cast", "award.given")
WORDS = {
    "proposal.adopted": "author",
    "proposal.made": "author",
    "turn.started": "player",
    "vote.cast": "voter",
    "award.given": "player",
}

numbers = st.sampled_from(["0", "1", "3", "7", "0.5", "100", "1000000"])


@st.composite
def expressions(draw: st.DrawFn, who: str, depth: int = 0) -> str:
    leaves = [draw(numbers), f"{who}.coins", "pot", "count(players)", f"{who}.points"]
    if depth > 2:
        return draw(st.sampled_from(leaves))
    left = draw(expressions(who, depth + 1))
    right = draw(expressions(who, depth + 1))
    form = draw(st.sampled_from(["leaf", "+", "-", "*", "/", "floor", "min", "max", "neg"]))
    if form == "leaf":
        return draw(st.sampled_from(leaves))
    if form == "floor":
        return f"floor({left})"
    if form in ("min", "max"):
        return f"{form}({left}, {right})"
    if form == "neg":
        return f"-({left})"
    return f"({left} {form} {right})"


@st.composite
def conditions(draw: st.DrawFn, who: str) -> str:
    op = draw(st.sampled_from(["<", ">", "=", "!=", ">=", "<="]))
    base = f"{draw(expressions(who))} {op} {draw(expressions(who))}"
    if draw(st.booleans()):
        return f"NOT {base} OR {who} = king"
    return base


@st.composite
def effects(draw: st.DrawFn, who: str, indent: str, depth: int = 0) -> list[str]:
    kind = draw(
        st.sampled_from(["give", "take", "move", "set", "pot", "roll", "say", "if", "each"])
    )
    amount = draw(expressions(who))
    if kind == "give":
        return [f"{indent}GIVE {who} {amount} coins"]
    if kind == "take":
        return [f"{indent}TAKE {who} {amount} points"]
    if kind == "move":
        return [f"{indent}MOVE {amount} coins FROM {who} TO game"]
    if kind == "set":
        return [f"{indent}SET {who}.coins = {amount}"]
    if kind == "pot":
        return [f"{indent}SET pot = {amount}"]
    if kind == "roll":
        return [f"{indent}ROLL d{depth} = 1..6", f"{indent}GIVE {who} d{depth} coins"]
    if kind == "say":
        return [f'{indent}ANNOUNCE "the pot moves"']
    if depth > 2:
        return [f"{indent}GIVE {who} 1 points"]
    if kind == "if":
        lines = [f"{indent}IF {draw(conditions(who))}:"]
        lines += draw(effects(who, indent + "  ", depth + 1))
        if draw(st.booleans()):
            lines += [f"{indent}ELSE:", *draw(effects(who, indent + "  ", depth + 1))]
        return lines
    inner = f"q{depth}"
    return [f"{indent}FOR EACH player {inner}:", *draw(effects(inner, indent + "  ", depth + 1))]


@st.composite
def blocks(draw: st.DrawFn) -> str:
    lines = [
        "COUNTER coins FOR player START 10 MIN 0",
        "COUNTER pot FOR game START 0",
        "ACTION grab(target player) BY player LIMIT 2 PER day:",
        f"  REQUIRE {draw(conditions('target'))}",
        *draw(effects("me", "  ")),
    ]
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["on", "every", "win", "forbid"]))
        if kind == "on":
            event = draw(st.sampled_from(EVENTS))
            lines.append(f"ON {event}:")
            lines += draw(effects(WORDS[event], "  "))
        elif kind == "every":
            lines.append(f"EVERY {draw(st.sampled_from(['day', 'week', 'month']))} END:")
            lines += draw(effects("king", "  "))
        elif kind == "win":
            lines.append(f"FOR EACH player w: WIN w WHEN {draw(conditions('w'))}")
        else:
            lines.append(f"FORBID grab WHEN {draw(conditions('player'))}")
    return "\n".join(lines) + "\n"


moves = st.lists(
    st.tuples(st.sampled_from(["event", "act", "tick"]), st.integers(0, 8), st.integers(0, 2)),
    max_size=8,
)


def play(owned: list[i.Owned], steps: list[tuple[str, int, int]]) -> list[i.Result]:
    ledger = i.Ledger()
    now = START
    results: list[i.Result] = []
    for link, (kind, pick, who) in enumerate(steps):
        table = i.Table(PLAYERS, PLAYERS[0], b"seed", link, now, ZoneInfo("Europe/Rome"))
        if kind == "event":
            event = EVENTS[pick % len(EVENTS)]
            done = [i.happen(owned, table, ledger, event, {WORDS[event]: PLAYERS[who]})]
        elif kind == "act":
            target = PLAYERS[(who + 1) % 3]
            done = [i.act(owned, table, ledger, PLAYERS[who], "grab", (target,))]
        else:
            later = now + timedelta(days=pick * 3 + 1)
            done = list(i.tick(owned, table, ledger, now, later))
            now = later
        for result in done:
            assert result.steps <= i.STEP_BUDGET
            ledger = result.ledger
        results += done
    return results


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks(), moves)
def test_random_blocks_and_play_are_deterministic_and_never_raise(
    text: str, steps: list[tuple[str, int, int]]
) -> None:
    tree = read_block(text, "en")
    assert isinstance(tree, p.Program), (tree, text)
    assert check(tree, SCOPE) == [], text
    owned = [i.Owned(301, 301, tree)]
    first = play(owned, steps)
    assert play(owned, steps) == first
    for result in first:
        for _counter, _who, value in result.ledger.values:
            assert abs(Fraction(value)) <= i.LARGEST


words = st.sampled_from(
    [
        "COUNTER",
        "ON",
        "IF",
        "ELSE",
        ":",
        "GIVE",
        "me",
        "coins",
        "1",
        "(",
        ")",
        "..",
        "\n",
        "  ",
        "FOR",
        "EACH",
        "player",
        "p",
        "ASK",
        '"q"',
        "=",
        "MECHANICS",
        "ÀÉ",
        "\t",
        ".",
    ]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(words, max_size=30).map(" ".join), st.sampled_from(["en", "it"]))
def test_any_text_reads_into_a_program_or_one_problem(text: str, language: str) -> None:
    made = read_block(text, language)
    assert isinstance(made, p.Program | p.Problem)
    if isinstance(made, p.Program):
        assert isinstance(check(made, SCOPE), list)
