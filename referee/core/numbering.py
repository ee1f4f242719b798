"""The number the game's first proposal takes (rule 109).

Rule 109 numbers proposals from 301. A ruleset that already uses numbers at or above 301 (in
its rules' numbers, old and new, or in the labels a document gave them, `§ 512`) starts just
above all of them, so that a proposal's number never names an existing rule too. This is the
one place that decides it; `engine.start_game` calls it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from referee.core.model import Rule

FIRST = 301  # 109


def first_proposal_number(rules: Iterable[Rule], floor: int = FIRST) -> int:
    """`floor` (301), or one more than the highest number the rules or their labels use."""
    used = [floor - 1]
    for rule in rules:
        used.extend(rule.numbers)
        used.extend(int(n) for n in re.findall(r"\d+", rule.label))
    return max(used) + 1
