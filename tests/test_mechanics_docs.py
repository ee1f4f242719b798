"""docs/mechanics.md: its twenty examples are accepted as written, and its grammar is the one
the parser reads (issue 26)."""

from __future__ import annotations

import re
from pathlib import Path

from referee.core import program as p
from referee.core.check import CounterInfo, Scope, check
from referee.core.describe import describe
from referee.notation import read_block
from referee.notation.parser import grammar
from tests.notation_blocks import SCOPE

DOC = (Path(__file__).resolve().parents[1] / "docs" / "mechanics.md").read_text("utf-8")
EXAMPLES = re.findall(r"```mechanics\n(.*?)```", DOC, re.S)
# What the examples lean on from other rules in force: a currency, and example 3's action
SCOPE_OF_OTHERS = Scope(
    {"coins": CounterInfo(p.HolderKind.PLAYER)}, frozenset({"pickpocket"}), SCOPE.commands
)


def test_twenty_examples_each_accepted_as_written_and_described() -> None:
    assert len(EXAMPLES) == 20
    for example in EXAMPLES:
        made = read_block(example, "en")
        assert isinstance(made, p.Program), (made, example)
        others = SCOPE if "COUNTER coins" in example else SCOPE_OF_OTHERS
        if "ACTION pickpocket" in example:
            others = Scope(others.counters, frozenset(), others.commands)
        assert check(made, others) == [], example
        assert len(describe(made, "it")) == len(made.declarations)


def test_the_grammar_in_the_docs_is_the_file_the_parser_reads() -> None:
    assert grammar().rstrip("\n") in DOC
