"""The number the game's first proposal takes (rule 109).

Rule 109 numbers proposals from 301. A ruleset that already uses numbers at or above 301 (in
its rules' numbers or in the labels a document gave them, `§ 512`) starts above all of them, at
the next hundred, so that a proposal's number never names an existing rule too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from referee.core.model import Rule

FIRST = 301  # 109


def first_proposal_number(rules: Iterable[Rule]) -> int:
    """301, or the first `N01` above every number the rules use."""
    used = 0
    for rule in rules:
        used = max(used, rule.number, *rule.numbers)
        used = max(used, *(int(n) for n in re.findall(r"\d+", rule.label)), 0)
    if used < FIRST:
        return FIRST
    return (used // 100 + 1) * 100 + 1
