"""Counts in the command line's English output: "1 proposal", "2 proposals", never "(s)".

The operator reads `status`, `run --once`, `outbox`, `replay`, `demo` and `archive`; each
count agrees with its noun. (Players' mail has its own plural helper, per language, in
`referee.mail.render`.) Serves no rule of the game; it serves the operator.
"""

from __future__ import annotations


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """`number` and `noun`, in the plural unless `number` is exactly one: "1 mail", "0 mails"."""
    if number == 1:
        return f"{number} {noun}"
    return f"{number} {plural or noun + 's'}"
