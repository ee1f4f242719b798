"""The mechanics notation read and checked when proposed (issue 26; rules 104, 106, 207)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from referee.core import program as p
from referee.core.check import CounterInfo, Scope, check
from referee.notation import read, read_block, split
from referee.notation.parser import grammar
from tests.notation_blocks import CINQUE, COMMANDS, FIVE, SCOPE, TRANSFER


def program(text: str, language: str = "en", scope: Scope = SCOPE) -> p.Program:
    made = read_block(text, language)
    assert isinstance(made, p.Program), made
    assert check(made, scope) == []
    return made


def refused(text: str, language: str = "en", scope: Scope = SCOPE) -> p.Problem:
    made = read_block(text, language)
    if isinstance(made, p.Problem):
        return made
    problems = check(made, scope)
    assert problems, text
    return problems[0]


def with_coins(kind: p.HolderKind = p.HolderKind.PLAYER) -> Scope:
    return Scope({"coins": CounterInfo(kind)}, commands=COMMANDS)


@pytest.mark.parametrize("language", ["en", "it"])
@pytest.mark.parametrize("index", range(5))
def test_the_five_blocks_are_accepted_as_written_in_either_game(language: str, index: int) -> None:
    made = program(FIVE[index], language, with_coins())
    assert made.declarations
    assert made.source == FIVE[index]


@pytest.mark.parametrize("index", range(5))
def test_the_italian_keywords_read_the_same_tree(index: int) -> None:
    italian = read_block(CINQUE[index], "it")
    assert isinstance(italian, p.Program), italian
    english = read_block(CINQUE[index].replace("monete", "coins"), "it")
    assert isinstance(english, p.Program)
    assert [type(d) for d in italian.declarations] == [type(d) for d in english.declarations]


def test_italian_keywords_are_not_read_in_an_english_game() -> None:
    problem = read_block(CINQUE[0], "en")
    assert isinstance(problem, p.Problem)
    assert (problem.code, problem.line, problem.column) == (p.ProblemCode.SYNTAX, 1, 1)
    assert "COUNTER" in problem.expected


def test_the_pickpocket_reads_into_the_tree_the_prose_describes() -> None:
    made = program(FIVE[2], scope=with_coins())
    (action,) = made.actions
    assert action.name == "pickpocket"
    assert action.limit == p.Limit(1, p.Period.DAY)
    require, roll, branch = action.body
    assert isinstance(require, p.Require)
    assert roll == p.Roll("r", p.Number(Fraction(1)), p.Number(Fraction(10)))
    assert isinstance(branch, p.If)
    assert branch.then == (p.Move(p.Number(Fraction(7)), "coins", "target", "me"),)
    (otherwise,) = branch.otherwise
    assert isinstance(otherwise, p.Move) and otherwise.target == "game"


def test_a_lowercase_word_is_a_name_where_a_keyword_is_in_capitals() -> None:
    made = program(TRANSFER)
    (action,) = made.actions
    assert action.parameters[0] == p.Parameter("to", p.ArgKind.PLAYER)
    assert action.acceptance == p.Acceptance("to", 7)


def test_the_block_starts_at_its_line_and_its_problems_count_lines_of_the_whole_text() -> None:
    text = (
        "Coins for authors.\nMECHANICS\n"
        "COUNTER coins FOR player START 0\nON proposal.adopted: GIVE author 40 coinz\n"
    )
    prose, block, first = split(text)
    assert prose == "Coins for authors." and block is not None and first == 3
    made = read(text, "en")
    assert isinstance(made, p.Program)
    problem = check(made, SCOPE)[0]
    assert (problem.code, problem.line, problem.column, problem.detail) == (
        p.ProblemCode.UNDECLARED,
        4,
        22,
        "coinz",
    )
    assert read("Just prose.\nSET voting_days = 3\n", "en") is None
    assert isinstance(read("Regola.\nMECCANICA\nCONTATORE x PER player\n", "it"), p.Program)


@pytest.mark.parametrize(
    ("text", "code", "column"),
    [
        ("COUNTER coins FOR people\n", p.ProblemCode.UNKNOWN_WORD, 19),
        ("COUNTER coins FOR player STRAT 0\n", p.ProblemCode.SYNTAX, 26),
        ("ON proposal.voted: GIVE author 1 points\n", p.ProblemCode.UNKNOWN_WORD, 4),
        ("ON proposal.adopted: GIVE me 1 points\n", p.ProblemCode.ME_OUTSIDE_ACTION, 22),
        ("ON vote.cast: GIVE voter author points\n", p.ProblemCode.TYPES, 26),
        ("ON vote.cast IF vote + 1 > 0: GIVE voter 1 points\n", p.ProblemCode.TYPES, 17),
        ("FORBID VOTE WHEN 1 = 1\n", p.ProblemCode.FORBID_VOTE, 1),
        ("ACTION vote(x number) BY player: GIVE me x points\n", p.ProblemCode.COMMAND_NAME, 1),
        ("ACTION stato(x number) BY player: GIVE me x points\n", p.ProblemCode.COMMAND_NAME, 1),
        (
            'EVERY week: FOR EACH player p:\n  IF ASK king "?": GIVE p 1 points\n',
            p.ProblemCode.ASK_PLACE,
            6,
        ),
        ("COUNTER coins FOR game\n", p.ProblemCode.KIND_CLASH, 1),
        ("EVERY fortnight: GIVE king 1 points\n", p.ProblemCode.UNKNOWN_WORD, 7),
        (
            "ON turn.started: GIVE player 1 points\n   GIVE player 1 points\n",
            p.ProblemCode.INDENT,
            1,
        ),
        ("WIN p WHEN p.points > 3\n", p.ProblemCode.UNKNOWN_NAME, 5),
        ("ON turn.started: SET coins = 3\n", p.ProblemCode.TYPES, 18),
    ],
)
def test_a_block_is_refused_with_its_line_column_and_what_was_expected(
    text: str, code: p.ProblemCode, column: int
) -> None:
    problem = refused(text, scope=with_coins())
    assert (problem.code, problem.column) == (code, column), problem


def test_points_redeclared_only_sets_its_decimals() -> None:
    made = program("COUNTER points DECIMALS 1\n")
    assert made.counters == (p.Counter("points", decimals=1),)


def test_forbid_propose_and_win_for_each_player_are_accepted() -> None:
    made = program(
        "COUNTER coins FOR player START 0\n"
        "FORBID PROPOSE WHEN player.coins < 0\n"
        "FOR EACH player p: WIN p WHEN p.coins >= 500\n"
    )
    assert made.forbids[0].move == "propose"
    assert made.wins[0].each == "p"


def test_the_grammar_file_is_the_one_the_docs_quote() -> None:
    text = grammar()
    assert "counter: COUNTER NAME counter_option*" in text
    assert "%declare" in text
