"""Load an initial ruleset from disk: one file per rule, its mutability and parameters (101, 102).

A ruleset folder holds `ruleset.toml` (name, language) and one `NNN.md` per rule: a TOML
front matter between `+++` lines (`number`, `mutable`, optional `title` and `[parameters]`)
and the rule's text after it, kept exactly as written. The built-in folders are `it` (the
seed, unchanged) and `en` (the project's English version). A plain-text document of numbered
paragraphs (`101. ...`) is taken in as well.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from referee.core import params
from referee.core.model import HistoryEntry, Rule
from referee.resources import data_folder


class RulesetError(ValueError):
    """The ruleset on disk is not one the referee can play."""


@dataclass(frozen=True)
class Ruleset:
    name: str
    language: str
    rules: tuple[Rule, ...]
    source: str

    def at(self, started: datetime) -> tuple[Rule, ...]:
        """The rules with their first history entry, dated at the game's start (101)."""
        return tuple(
            Rule(
                identity=r.identity,
                number=r.number,
                mutable=r.mutable,
                text=r.text,
                title=r.title,
                parameters=r.parameters,
                history=(HistoryEntry(r.number, "initial", started),),
            )
            for r in self.rules
        )


def builtin_folder(language: str) -> Path:
    folder = data_folder("ruleset") / language
    if not folder.is_dir():
        raise RulesetError(f"no built-in ruleset for language {language!r} (use 'it' or 'en')")
    return folder


def load(spec: str, language: str, base: Path | None = None) -> Ruleset:
    """`spec` is "builtin" or a path (relative to `base`) to a ruleset folder or document."""
    if spec == "builtin":
        return load_folder(builtin_folder(language))
    path = Path(spec)
    if not path.is_absolute() and base is not None:
        path = base / path
    if path.is_dir() and (path / "index.toml").is_file():
        return load_archive(path)
    if path.is_dir():
        return load_folder(path)
    if path.is_file():
        return load_document(path, language)
    raise RulesetError(f"ruleset not found: {path}")


def load_archive(folder: Path) -> Ruleset:
    """The rules in force in a rule archive's `rules/` folder: a new game from an old one."""
    from referee.archive.check import ArchiveError, read_rules

    try:
        name, language, rules = read_rules(folder)
    except (ArchiveError, OSError) as exc:
        raise RulesetError(str(exc)) from exc
    return _checked(Ruleset(name, language, rules, str(folder)))


_FRONT = re.compile(r"\A\+\+\+\n(.*?)\n\+\+\+\n?(.*)\Z", re.S)


def parse_rule_file(path: Path) -> Rule:
    raw = path.read_text(encoding="utf-8")
    match = _FRONT.match(raw)
    if match is None:
        raise RulesetError(f"{path.name}: no '+++' front matter")
    try:
        meta = tomllib.loads(match.group(1))
    except tomllib.TOMLDecodeError as exc:
        raise RulesetError(f"{path.name}: {exc}") from exc
    number = meta.get("number")
    if not isinstance(number, int) or number < 0:
        raise RulesetError(f"{path.name}: 'number' must be a whole number")
    mutable = meta.get("mutable")
    if not isinstance(mutable, bool):
        raise RulesetError(f"{path.name}: 'mutable' must be true or false")
    text = match.group(2).strip("\n")
    if not text.strip():
        raise RulesetError(f"{path.name}: the rule has no text")
    carried = _parameters(path.name, meta.get("parameters", {}))
    title = meta.get("title", "")
    if not isinstance(title, str):
        raise RulesetError(f"{path.name}: 'title' must be text")
    unknown = set(meta) - {"number", "mutable", "title", "parameters"}
    if unknown:
        raise RulesetError(f"{path.name}: unknown keys {sorted(unknown)}")
    return Rule(
        identity=number,
        number=number,
        mutable=mutable,
        text=text,
        title=title,
        parameters=carried,
    )


def _parameters(where: str, table: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(table, dict):
        raise RulesetError(f"{where}: [parameters] must be a table")
    sets = tuple((str(k), str(v)) for k, v in table.items())
    defaults = {s.name: s.default for s in params.SPECS}
    problem = params.check_sets(sets, defaults)
    if problem is not None:
        raise RulesetError(f"{where}: parameter {problem.name} = {problem.value}: {problem.detail}")
    return sets


def load_folder(folder: Path) -> Ruleset:
    index = folder / "ruleset.toml"
    meta: dict[str, Any] = {}
    if index.is_file():
        meta = tomllib.loads(index.read_text(encoding="utf-8"))
    rules = [parse_rule_file(p) for p in sorted(folder.glob("*.md"))]
    return _checked(
        Ruleset(
            name=str(meta.get("name", folder.name)),
            language=str(meta.get("language", "")),
            rules=tuple(sorted(rules, key=lambda r: r.number)),
            source=str(folder),
        )
    )


_SECTION = re.compile(r"^\s*(?:[•*-]\s+)?(§\s*)?(-?\d+(?:\.\d+)*)\.?\s+(\S.*)$")


def load_document(path: Path, language: str) -> Ruleset:
    """A text of numbered paragraphs, taken in as a game's initial rules.

    Two shapes are read. Nomic's own (`101. ...`): each number is the rule's, the 100s
    immutable and the rest mutable (102). A code of laws (`§ 2.2.1. ...`, nested, with bullets,
    a preamble, even the same label twice): every section becomes a mutable rule numbered
    1, 2, 3 ... in document order, keeping its label (`§ 2.2.1`) as the rule's title; the
    preamble, if any, is rule 1.
    """
    text = path.read_text(encoding="utf-8")
    sections: list[tuple[str, str]] = []  # (label, text)
    preamble: list[str] = []
    for line in text.splitlines():
        match = _SECTION.match(line)
        if match:
            label = ("§ " if match.group(1) else "") + match.group(2)
            sections.append((label, match.group(3).strip()))
        elif line.strip():
            if sections:
                label, body = sections[-1]
                sections[-1] = (label, body + "\n" + line.strip())
            else:
                preamble.append(line.strip())
    nomic = bool(sections) and all(re.fullmatch(r"\d{3}", label) for label, _ in sections)
    rules: list[Rule] = []
    if nomic:
        for label, body in sections:
            number = int(label)
            rules.append(Rule(number, number, number >= 200, body))
    else:
        numbered = [("", "\n".join(preamble))] if preamble else []
        for index, (label, body) in enumerate([*numbered, *sections], start=1):
            title = label or "preamble"
            rules.append(Rule(index, index, True, body, title=title))
    return _checked(Ruleset(path.stem, language, tuple(rules), str(path)))


def _checked(ruleset: Ruleset) -> Ruleset:
    if not ruleset.rules:
        raise RulesetError(f"{ruleset.source}: no rules found")
    numbers = [r.number for r in ruleset.rules]
    duplicates = sorted({n for n in numbers if numbers.count(n) > 1})
    if duplicates:
        raise RulesetError(f"{ruleset.source}: rule numbers used twice: {duplicates}")
    if not any(r.mutable for r in ruleset.rules):  # 115
        raise RulesetError(f"{ruleset.source}: there must be at least one mutable rule (115)")
    return ruleset
