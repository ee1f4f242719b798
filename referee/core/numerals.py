"""Numbers as a player may write them in a command: ASCII digits, within a bound (rules 107, 203).

Python's `str.isdigit` and `int` accept superscripts, Arabic-Indic and other Unicode digits, and
`int` raises on more than 4,300 digits; a command number is only ever a short run of the ten
ASCII digits. Anything else is not a number here, so the line it stands on is refused alone.
"""

from __future__ import annotations

import re

MAX_DIGITS = 9  # no proposal, rule, appeal or score in a game reaches a billion
DIGITS = f"[0-9]{{1,{MAX_DIGITS}}}"  # for patterns that hold a number among other marks
_NUMBER = re.compile(DIGITS)


def is_number(text: str) -> bool:
    """Whether `text` is a command number: 1 to MAX_DIGITS ASCII digits and nothing else."""
    return _NUMBER.fullmatch(text) is not None


def number(text: str) -> int | None:
    """The value of a command number, or None for anything else (any other numeral, too long)."""
    return int(text) if _NUMBER.fullmatch(text) else None
