"""The interpreter runs the five blocks of issue 26 as their prose says (101, 207, 211)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from zoneinfo import ZoneInfo

import pytest

from referee.core import interpreter as i
from referee.core import program as p
from referee.notation import read_block
from tests.notation_blocks import CINQUE, FIVE

ADA, BOB, CARLA = "ada@example.org", "bob@example.org", "carla@example.org"
ROME = ZoneInfo("Europe/Rome")
NOW = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)


def owned(*blocks: str, language: str = "en", first: int = 301) -> list[i.Owned]:
    made = []
    for index, block in enumerate(blocks):
        tree = read_block(block, language)
        assert isinstance(tree, p.Program), tree
        made.append(i.Owned(first + index, first + index, tree))
    return made


def table(now: datetime = NOW, link: int = 7, turn: int = 1) -> i.Table:
    return i.Table((ADA, BOB, CARLA), ADA, b"seed", link, now, ROME, turn)


def ledger(**values: Sequence[tuple[str, int | str]]) -> i.Ledger:
    rows = [(c, who, str(v)) for c, held in values.items() for who, v in held]
    return i.Ledger(values=tuple(sorted(rows)))


def value(result: i.Result, counter: str, who: str) -> Fraction:
    return result.ledger.value(counter, who)


@pytest.mark.parametrize("block", [FIVE[0], CINQUE[0].replace("monete", "coins")])
def test_a_proposal_adopted_gives_its_author_40_coins(block: str) -> None:
    rules = owned(block, language="it")
    done = i.happen(rules, table(), i.Ledger(), "proposal.adopted", {"author": BOB})
    assert value(done, "coins", BOB) == 40
    assert done.changes == (i.Change(301, "coins", BOB, Fraction(0), Fraction(40)),)
    again = i.happen(rules, table(), done.ledger, "proposal.adopted", {"author": BOB})
    assert value(again, "coins", BOB) == 80


def test_the_rule_s_own_adoption_does_not_run_its_own_handler() -> None:
    rules = owned(FIVE[0])
    done = i.happen(rules, table(), i.Ledger(), "proposal.adopted", {"author": BOB}, 301)
    assert done.changes == ()


@pytest.mark.parametrize("language", ["en", "it"])
def test_spendies_reset_at_the_month_s_end_and_20_each_at_its_start(language: str) -> None:
    block = FIVE[1] if language == "en" else CINQUE[1].replace("spiccioli", "spendies")
    rules = owned(block, language=language)
    start = ledger(spendies=[(ADA, 5), (BOB, 3)])
    # from 29 November to 2 January in Rome: two month ends and two month starts
    since = datetime(2026, 11, 29, 12, tzinfo=UTC)
    until = datetime(2027, 1, 2, 12, tzinfo=UTC)
    results = i.tick(rules, table(), start, since, until)
    assert len(results) == 4
    assert [value(r, "spendies", ADA) for r in results] == [0, 20, 0, 20]
    assert value(results[-1], "spendies", CARLA) == 20
    # the month starts at midnight in Rome, an hour before midnight UTC
    edges = list(i.edges(since, until, ROME, {p.Period.MONTH}))
    assert edges[1][0] == datetime(2026, 11, 30, 23, tzinfo=UTC)
    assert edges[0][2] is p.Edge.END and edges[1][2] is p.Edge.START


def test_downtime_fires_each_period_crossed_once() -> None:
    rules = owned("COUNTER days FOR game START 0\nEVERY day START: SET days = days + 1\n")
    since = datetime(2026, 12, 1, 12, tzinfo=UTC)
    results = i.tick(rules, table(), i.Ledger(), since, since + timedelta(days=10))
    assert len(results) == 10
    assert results[-1].ledger.value("days", "game") == 10


@pytest.mark.parametrize("language", ["en", "it"])
def test_pickpocket_once_a_day_seeded_dice_moves_coins(language: str) -> None:
    block = FIVE[2] if language == "en" else CINQUE[2].replace("monete", "coins")
    rules = owned(FIVE[0], block, language=language)
    start = ledger(coins=[(ADA, 30), (BOB, 60), (CARLA, 10)])
    refused = i.act(
        rules, table(), start, ADA, "pickpocket" if language == "en" else "borseggio", (CARLA,)
    )
    assert not refused.applied and refused.stopped[0].reason is i.StopReason.REQUIRE
    name = "pickpocket" if language == "en" else "borseggio"
    done = i.act(rules, table(), start, ADA, name, (BOB,))
    assert done.applied
    die = i.draw(b"seed", 7, 1, 1, 10)
    if die > 7:
        assert (value(done, "coins", ADA), value(done, "coins", BOB)) == (37, 53)
    else:
        assert (value(done, "coins", ADA), value(done, "coins", "game")) == (27, 3)
    again = i.act(rules, table(link=8), done.ledger, ADA, name, (BOB,))
    assert again.stopped[0].reason is i.StopReason.LIMIT and not again.applied
    tomorrow = i.act(rules, table(NOW + timedelta(days=1), 9), done.ledger, ADA, name, (BOB,))
    assert tomorrow.stopped == () and tomorrow.applied
    # the same event replayed draws the same die
    assert i.act(rules, table(), start, ADA, name, (BOB,)) == done


def test_both_branches_of_the_pickpocket_are_reached_by_the_seeded_dice() -> None:
    rules = owned(FIVE[0], FIVE[2])
    start = ledger(coins=[(ADA, 30), (BOB, 60)])
    outcomes = set()
    for link in range(40):
        done = i.act(rules, table(link=link), start, ADA, "pickpocket", (BOB,))
        outcomes.add(value(done, "coins", ADA))
    assert outcomes == {Fraction(37), Fraction(27)}


def test_transfer_is_an_offer_the_receiver_accepts_within_seven_days() -> None:
    rules = owned(FIVE[3])
    start = ledger(points=[(ADA, 10)])
    refused = i.act(rules, table(), start, ADA, "transfer", (BOB, Fraction(11)))
    assert refused.stopped[0].reason is i.StopReason.REQUIRE
    offered = i.act(rules, table(), start, ADA, "transfer", (BOB, Fraction(4)))
    assert offered.offered is not None and offered.changes == ()
    number = offered.offered.number
    wrong = i.accept(rules, table(), offered.ledger, number, CARLA)
    assert wrong.stopped[0].reason is i.StopReason.NO_OFFER
    done = i.accept(rules, table(NOW + timedelta(days=2)), offered.ledger, number, BOB)
    assert (value(done, "points", ADA), value(done, "points", BOB)) == (6, 4)
    assert done.ledger.offers == ()
    late = i.accept(rules, table(NOW + timedelta(days=8)), offered.ledger, number, BOB)
    assert late.stopped[0].reason is i.StopReason.EXPIRED and late.ledger.offers == ()


def test_the_king_s_answer_runs_the_effects_after_the_ask() -> None:
    rules = owned(FIVE[4])
    asked = i.happen(rules, table(), i.Ledger(), "proposal.adopted", {"author": BOB})
    (question,) = asked.asked
    assert question.question.startswith("Does the author's text")
    assert asked.changes == () and asked.ledger.questions == (question,)
    yes = i.answer(rules, table(), asked.ledger, question.number, True)
    assert value(yes, "points", BOB) == Fraction(1, 10)
    assert yes.ledger.questions == ()
    assert yes.ledger.values == (("points", BOB, "0.1"),)
    no = i.answer(rules, table(), asked.ledger, question.number, False)
    assert no.changes == () and no.ledger.questions == ()
    repealed = i.answer([], table(), asked.ledger, question.number, True)
    assert repealed.changes == () and repealed.ledger.questions == ()


def test_handlers_run_in_precedence_order_and_a_stop_applies_nothing_of_its_handler() -> None:
    first = (
        "COUNTER gold FOR player START 0 MAX 5\n"
        "ON turn.started:\n  GIVE player 3 gold\n  GIVE player 3 gold\n"
    )
    second = "ON turn.started: GIVE player 1 points\n"
    rules = owned(first, second)
    done = i.happen(rules, table(), i.Ledger(), "turn.started", {"player": BOB})
    assert value(done, "gold", BOB) == 0 and value(done, "points", BOB) == 1
    assert done.stopped == (i.Stopped(301, i.StopReason.BOUNDS, "gold"),)


def test_a_runaway_block_is_stopped_by_the_budget_and_nothing_applies() -> None:
    loops = "".join(f"FOR EACH player {name}: " for name in "abcdefghk")
    nested = f"ON turn.started: {loops}GIVE a 1 points\n"
    rules = owned("ON turn.started: GIVE player 1 points\n", nested)
    done = i.happen(rules, table(), i.Ledger(), "turn.started", {"player": BOB})
    assert not done.applied and done.stopped[0].reason is i.StopReason.BUDGET
    assert done.ledger == i.Ledger()


def test_forbid_and_win() -> None:
    rules = owned(
        "COUNTER coins FOR player START 0\n"
        "FORBID PROPOSE WHEN player.coins < 0\n"
        "FOR EACH player p: WIN p WHEN p.coins >= 100\n"
    )
    poor = ledger(coins=[(BOB, -1), (CARLA, 100)])
    assert i.forbidden(rules, table(), poor, "propose", BOB) == i.Stopped(
        301, i.StopReason.FORBIDDEN, "propose"
    )
    assert i.forbidden(rules, table(), poor, "propose", BOB, one_proposal=True) is None
    assert i.forbidden(rules, table(), poor, "propose", ADA) is None
    assert i.winners(rules, table(), poor) == ((301, CARLA),)


def test_decimal_text_is_exact() -> None:
    assert i.text_of(Fraction(-5, 2), 1) == "-2.5"
    assert i.text_of(Fraction(1, 10), 1) == "0.1"
    assert i.text_of(Fraction(40), 0) == "40"
