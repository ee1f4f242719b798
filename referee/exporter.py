"""Write a ruleset folder back as one document, in the source's own numbering (101, 109).

The inverse of `referee.importer`: the title, the preamble, then every heading and passage of
document text (placed before the rule it was found before) and every rule in the document's
order with its header as written (`• § 2.2.1.`, `IV.`, `Rule 2327/3 (Power=1)` and its title),
its text and its History / Annotations blocks.
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
    position: int
    history: str

    def block(self) -> str:
        """The rule as the document wrote it: its header, its text, its history."""
        if not self.marker:
            body = self.text
        elif self.marker.endswith("\n"):  # a header on lines of its own
            body = self.marker + "\n" + self.text
        else:
            body = f"{self.marker} {self.text}"
        return body + ("\n\n" + self.history if self.history else "")


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
        position = meta.get("position")
        history = meta.get("history", "")
        entries.append(
            _Entry(
                number,
                marker,
                text,
                position if isinstance(position, int) else 1 << 62,
                history if isinstance(history, str) else "",
            )
        )
    return sorted(entries, key=lambda e: (e.position, e.number))


def _heading_line(heading: dict[str, Any], markdown: bool) -> str:
    line = str(heading.get("line", ""))
    if heading.get("kind") == "text":
        return ""
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
        setext = "\n" in title  # a title underlined with "===" is a Markdown heading already
        blocks.append(title if not markdown or title.startswith("#") or setext else "# " + title)
    if meta.get("preamble"):
        blocks.append(str(meta["preamble"]))

    def heading_blocks(before: int | None) -> None:
        for heading in headings:
            if heading.get("before") == before:
                line = _heading_line(heading, markdown)
                if line:
                    blocks.append(line)
                if heading.get("text"):
                    blocks.append(str(heading["text"]))

    numbers = {r.number for r in rules}
    for rule in rules:
        heading_blocks(rule.number)
        blocks.append(rule.block())
    heading_blocks(None)
    for heading in headings:  # headings placed before a rule no longer in the folder
        if heading.get("before") is not None and heading.get("before") not in numbers:
            line = _heading_line(heading, markdown)
            if line:
                blocks.append(line)
            if heading.get("text"):
                blocks.append(str(heading["text"]))
    return "\n\n".join(blocks) + "\n"
