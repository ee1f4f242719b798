"""Read an archive back and check it, like Rulekeepor's validator (rules 101-103, 109, 110, 115).

`read_rules` takes the rules in force from an archive's `rules/` folder, so a new game can
start from the ruleset another game ended with (`ruleset = "<archive>/rules"`). `check_archive`
refuses histories that cannot have happened, naming the file and the entry at fault: the first
change must be an enactment, dates must run forward, a number belongs to one rule only (109),
an immutable rule is never amended (103, 110), nothing happens to a repealed rule but a
re-enactment, and parameters are ones the referee knows, with valid values.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from referee.archive.history import RULE_CHANGE_KINDS
from referee.core import labels, params
from referee.core.model import Rule

AMENDING = {"amended", "amendment-enacted", "amendment-amended", "amendment-repealed"}


@dataclass(frozen=True)
class Problem:
    file: str
    entry: int | None  # 1-based [[history]] entry, None for the file as a whole
    message: str

    def __str__(self) -> str:
        where = self.file if self.entry is None else f"{self.file}: history entry {self.entry}"
        return f"{where}: {self.message}"


class ArchiveError(ValueError):
    """An archive that cannot be read as a ruleset."""


def _rule_files(rules: Path) -> list[Path]:
    return sorted(
        (p for p in rules.glob("*.toml") if p.name != "index.toml"),
        key=lambda p: (len(p.stem), p.stem),
    )


def _load(path: Path) -> dict[str, Any]:
    with path.open("rb") as handle:
        return tomllib.load(handle)


def _parameters(table: Any) -> tuple[tuple[str, str], ...]:
    if not isinstance(table, dict):
        raise ValueError("parameters must be a table")
    sets = tuple((str(k), str(v)) for k, v in table.items())
    problem = params.check_sets(sets, {s.name: s.default for s in params.SPECS})
    if problem is not None:
        raise ValueError(f"parameter {problem.name} = {problem.value}: {problem.detail}")
    return sets


def read_rules(folder: Path) -> tuple[str, str, tuple[Rule, ...]]:
    """The game's name, language and rules in force from an archive's `rules/` folder, in the
    order they are read (each keeps its label, its path and its place in the document)."""
    meta_file = folder.parent / "archive.toml"
    meta = _load(meta_file) if meta_file.is_file() else {}
    rules: list[Rule] = []
    for path in _rule_files(folder):
        try:
            data = _load(path)
            if not data.get("in_force", True):
                continue
            number, text = data["number"], data["text"]
            if not isinstance(number, int) or not isinstance(text, str) or not text.strip():
                raise ValueError("'number' and 'text' are required")
            rules.append(
                Rule(
                    identity=number,
                    number=number,
                    mutable=bool(data["mutable"]),
                    text=text.strip("\n"),
                    title=str(data.get("title", "")),
                    label=str(data.get("label", "")),
                    parameters=_parameters(data.get("parameters", {})),
                    path=str(data.get("path", "")),
                    position=_position(data.get("position", 0)),
                )
            )
        except (tomllib.TOMLDecodeError, KeyError, ValueError) as exc:
            raise ArchiveError(f"{path}: {exc}") from exc
    return (
        str(meta.get("game", folder.parent.name)),
        str(meta.get("language", "")),
        labels.reading_order(rules),  # the document's order, then the game's new rules
    )


def _position(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError("'position' must be a whole number")
    return value


def check_archive(folder: Path) -> list[Problem]:
    """Every problem found in the archive in `folder` (or in its `rules/` folder)."""
    rules = folder / "rules" if (folder / "rules").is_dir() else folder
    files = _rule_files(rules)
    if not files:
        return [Problem(str(rules), None, "no rule files (rules/<identity>.toml) found")]
    problems: list[Problem] = []
    claims: dict[int, list[tuple[str, int]]] = {}  # number -> (file, entry) of each rule with it
    for path in files:
        name = f"{rules.name}/{path.name}"
        try:
            data = _load(path)
        except tomllib.TOMLDecodeError as exc:
            problems.append(Problem(name, None, f"not valid TOML: {exc}"))
            continue
        problems += _check_rule(name, data, claims)
    for number, users in sorted(claims.items()):
        for name, index in users:
            others = sorted({n for n, _ in users if n != name})
            if others:
                used = ", ".join(others)
                problems.append(Problem(name, index, f"number {number} is also used by {used}"))
    return problems


def _check_rule(
    name: str, data: dict[str, Any], claims: dict[int, list[tuple[str, int]]]
) -> list[Problem]:
    out: list[Problem] = []
    history = data.get("history")
    if not isinstance(history, list) or not history:
        return [Problem(name, None, "no [[history]]: every rule starts with its enactment")]
    try:
        _parameters(data.get("parameters", {}))
    except ValueError as exc:
        out.append(Problem(name, None, str(exc)))
    mutable: bool | None = None
    repealed = False
    last_date: datetime | None = None
    numbers: list[int] = []
    for index, entry in enumerate(history, start=1):
        if not isinstance(entry, dict):
            out.append(Problem(name, index, "not a table"))
            continue
        kind = entry.get("kind")
        if kind not in RULE_CHANGE_KINDS:
            out.append(Problem(name, index, f"unknown kind {kind!r}"))
            continue
        if index == 1 and kind != "enacted":
            out.append(Problem(name, index, f"the first change must be 'enacted', not {kind!r}"))
        date = entry.get("date")
        if not isinstance(date, datetime):
            out.append(Problem(name, index, "no date (a TOML date-time)"))
        else:
            if last_date is not None and _utc(date) < _utc(last_date):
                out.append(
                    Problem(name, index, f"dated {date} before the change above ({last_date})")
                )
            last_date = date
        if repealed and kind != "re-enacted":
            out.append(Problem(name, index, f"{kind} after the rule was repealed"))
        if kind == "re-enacted" and not repealed:
            out.append(Problem(name, index, "re-enacted but never repealed"))
        if kind in AMENDING and mutable is False:
            out.append(Problem(name, index, f"{kind}: the rule is immutable (103)"))
        if "mutable" in entry:
            mutable = bool(entry["mutable"])
        elif kind == "transmuted" and mutable is not None:
            mutable = not mutable
        if index == 1 and mutable is None:
            out.append(Problem(name, index, "the enactment must say whether the rule is mutable"))
        if "parameters" in entry:
            try:
                _parameters(entry["parameters"])
            except ValueError as exc:
                out.append(Problem(name, index, str(exc)))
        repealed = kind == "repealed" or (repealed and kind != "re-enacted")
        number = entry.get("number")
        if not isinstance(number, int):
            out.append(Problem(name, index, "no rule number"))
            continue
        if number not in numbers:
            numbers.append(number)
            claims.setdefault(number, []).append((name, index))
    if isinstance(data.get("number"), int) and numbers and data["number"] != numbers[-1]:
        out.append(
            Problem(name, None, f"number {data['number']} but the history ends at {numbers[-1]}")
        )
    if "mutable" in data and mutable is not None and bool(data["mutable"]) != mutable:
        out.append(Problem(name, None, "'mutable' disagrees with the history"))
    if "in_force" in data and bool(data["in_force"]) == repealed:
        out.append(Problem(name, None, "'in_force' disagrees with the history"))
    return out


def _utc(at: datetime) -> datetime:
    from datetime import UTC

    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)
