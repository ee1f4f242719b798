"""Write a ruleset folder back as one document, in the source's own numbering (101, 109).

The inverse of `referee.importer`: the title, the preamble, then every heading (placed before
the rule it was found before) and every rule with its marker as written (`• § 2.2.1.`, `IV.`).
`export(import(doc))` gives the document back up to whitespace. A folder written by hand or a
built-in one (no markers) is written as Nomic writes rules: `101. text`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.rulebook import RulesetError, front_matter, read_index


@dataclass(frozen=True)
class _Entry:
    number: int
    marker: str
    text: str


def _rules(folder: Path) -> list[_Entry]:
    entries = []
    for path in sorted(folder.glob("*.md")):
        meta, text = front_matter(path)
        number = meta.get("number")
        if not isinstance(number, int):
            raise RulesetError(f"{path.name}: 'number' must be a whole number")
        marker = meta.get("marker")
        if not isinstance(marker, str):
            label = meta.get("label")
            marker = f"{label}." if isinstance(label, str) and label else f"{number}."
        entries.append(_Entry(number, marker, text))
    return sorted(entries, key=lambda e: e.number)


def _heading_line(heading: dict[str, Any], markdown: bool) -> str:
    line = str(heading.get("line", ""))
    if markdown and not line.lstrip().startswith("#") and "\n" not in line:
        depth = heading.get("depth", 1)
        level = depth + 1 if isinstance(depth, int) else 2
        return "#" * min(level, 6) + " " + line
    return line


def export(folder: Path, form: str | None = None) -> str:
    """The folder as one document; `form` is "md" or "txt" (default: the source's)."""
    meta = read_index(folder)
    chosen = form or str(meta.get("format", "txt"))
    if chosen not in ("md", "txt"):
        raise RulesetError(f"unknown format {chosen!r} (use md or txt)")
    markdown = chosen == "md"
    rules = _rules(folder)
    if not rules:
        raise RulesetError(f"{folder}: no rule files (NNN.md)")
    headings = meta.get("headings", [])
    if not isinstance(headings, list):
        raise RulesetError(f"{folder}/ruleset.toml: [[headings]] must be an array of tables")
    blocks: list[str] = []
    title = str(meta.get("title", "") or "")
    if title:
        blocks.append(title if not markdown or title.startswith("#") else "# " + title)
    if meta.get("preamble"):
        blocks.append(str(meta["preamble"]))

    def heading_blocks(before: int | None) -> None:
        for heading in headings:
            if heading.get("before") == before:
                blocks.append(_heading_line(heading, markdown))
                if heading.get("text"):
                    blocks.append(str(heading["text"]))

    numbers = {r.number for r in rules}
    for rule in rules:
        heading_blocks(rule.number)
        blocks.append(f"{rule.marker} {rule.text}" if rule.marker else rule.text)
    trailing = [h for h in headings if h.get("before") not in numbers]
    for heading in trailing:
        blocks.append(_heading_line(heading, markdown))
        if heading.get("text"):
            blocks.append(str(heading["text"]))
    return "\n\n".join(blocks) + "\n"
