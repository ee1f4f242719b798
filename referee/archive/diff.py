"""What changed in the rules between two dates (rules 103, 109, 110, 205).

`rules_diff` compares the ruleset as it stood at one moment with another: rules enacted,
repealed, renumbered, transmuted, and a unified diff of every text that changed, followed by
the changes that happened in between, each with its proposal, author and deciding mail.
"""

from __future__ import annotations

import difflib
import textwrap
from datetime import datetime

from referee.archive.history import History, RuleVersion


def _wrapped(text: str) -> list[str]:
    lines: list[str] = []
    for paragraph in text.splitlines():
        lines += textwrap.wrap(paragraph, 88) or [""]
    return lines


def _alive(v: RuleVersion | None) -> RuleVersion | None:
    return v if v is not None and v.in_force else None


def rules_diff(history: History, start: datetime, end: datetime) -> str:
    out: list[str] = [f"{history.name}: rules from {start.isoformat()} to {end.isoformat()}", ""]
    changed = 0
    for record in sorted(history.rules.values(), key=lambda r: r.current.number):
        before, after = _alive(record.at_time(start)), _alive(record.at_time(end))
        if before is None and after is None:
            continue
        if before is not None and after is not None and before == after:
            continue
        if before is None and after is not None:
            out.append(
                f"+ Rule {after.number} enacted ({'mutable' if after.mutable else 'immutable'})"
            )
            out += [f"+   {line}" for line in _wrapped(after.text)]
        elif after is None and before is not None:
            out.append(f"- Rule {before.number} repealed")
        elif before is not None and after is not None:
            notes = []
            if before.number != after.number:
                notes.append(f"renumbered {before.number} -> {after.number}")
            if before.mutable != after.mutable:
                notes.append("now mutable" if after.mutable else "now immutable")
            if before.parameters != after.parameters:
                notes.append("parameters " + ", ".join(f"{k} = {v}" for k, v in after.parameters))
            if not notes and before.text == after.text:
                continue
            out.append(f"~ Rule {after.number}" + (f": {'; '.join(notes)}" if notes else ""))
            if before.text != after.text:
                out += list(
                    difflib.unified_diff(
                        _wrapped(before.text),
                        _wrapped(after.text),
                        f"rule {before.number} ({before.at.date()})",
                        f"rule {after.number} ({after.at.date()})",
                        lineterm="",
                    )
                )
        out.append("")
        changed += 1
    if not changed:
        out += ["No rule changed.", ""]
    between = [c for c in history.changes if start < c.at <= end and c.rules]
    if between:
        out.append("Changes:")
        for c in between:
            mid = f" {c.message_id}" if c.message_id else ""
            who = f" ({c.author})" if c.author else ""
            out.append(f"  {c.at.isoformat()}  {c.summary}{who}{mid}")
    return "\n".join(out).rstrip("\n") + "\n"
