"""Load an initial ruleset from disk: one file per rule, its mutability and parameters (101, 102).

A ruleset folder holds `ruleset.toml` (name, language, options) and one `NNN.md` per rule: a
TOML front matter between `+++` lines (`number`, `mutable`, optional `title`, `label`, `path`,
`marker` and `[parameters]`) and the rule's text after it, kept exactly as written. The built-in
folders are `it` (the seed, unchanged) and `en` (the project's English version); `nomic-referee
import` writes such a folder from any rule document, and a document given directly as `[game]
ruleset` is read the same way (`referee.importer`). `ruleset.toml` may list the rules that are
`immutable` and the game parameters each rule carries (`[carry]`, 111, 211), naming rules by
label, path or number. `check_playable` refuses, with the fix, a ruleset a game could not move
under: more mutable rules than rule 210 allows, or none at all (115).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from referee import findings, importer
from referee.core import labels, params
from referee.core.mechanics import SPECS, Mechanic
from referee.core.model import GameState, HistoryEntry, Rule
from referee.resources import data_folder


class RulesetError(ValueError):
    """The ruleset on disk is not one the referee can play."""


@dataclass(frozen=True)
class Ruleset:
    name: str
    language: str
    rules: tuple[Rule, ...]
    source: str
    # `[mechanics]` and `house_mechanics` of ruleset.toml (`referee.core.mechanics`): which
    # rules carry which mechanic, and which mechanics run though no rule carries them.
    carriers: tuple[tuple[str, int], ...] = ()
    house_mechanics: tuple[str, ...] = ()

    def at(self, started: datetime) -> tuple[Rule, ...]:
        """The rules with their first history entry, dated at the game's start (101)."""
        return tuple(
            replace(r, history=(HistoryEntry(r.number, "initial", started),)) for r in self.rules
        )


def builtin_folder(language: str) -> Path:
    folder = data_folder("ruleset") / language
    if not folder.is_dir():
        raise RulesetError(f"no built-in ruleset for language {language!r} (use 'it' or 'en')")
    return folder


def load(
    spec: str,
    language: str,
    base: Path | None = None,
    house: Mapping[str, str] | None = None,
    strict: bool = False,
) -> Ruleset:
    """`spec` is "builtin" or a path (relative to `base`) to a ruleset folder or document.

    `house` holds the config's [parameters]: the value a rule takes when `[carry]` names the
    rule but not the value. A value a rule sets plainly is carried by that rule; any other
    value a rule states stays prose (`strict`: refused until carried or dismissed)."""
    if spec == "builtin":
        return load_folder(builtin_folder(language), house)
    path = Path(spec)
    if not path.is_absolute() and base is not None:
        path = base / path
    if path.is_dir() and (path / "index.toml").is_file():
        return load_archive(path)
    if path.is_dir():
        return load_folder(path, house, settled=strict)
    if path.is_file():
        return load_document(path, language, strict)
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
_RULE_KEYS = {"number", "mutable", "title", "parameters", "label", "path", "marker"}
# What an imported rule file keeps for its document only (the export writes them back): its
# place in the document, and the revision, power and History / Annotations its header had.
_DOCUMENT_KEYS = {"position", "revision", "power", "history"}


def front_matter(path: Path) -> tuple[dict[str, Any], str]:
    """A rule file's front matter and its text."""
    raw = path.read_text(encoding="utf-8")
    match = _FRONT.match(raw)
    if match is None:
        raise RulesetError(f"{path.name}: no '+++' front matter")
    try:
        meta = tomllib.loads(match.group(1))
    except tomllib.TOMLDecodeError as exc:
        raise RulesetError(f"{path.name}: {exc}") from exc
    return meta, match.group(2).strip("\n")


def parse_rule_file(path: Path, mutable_default: bool | None = None) -> Rule:
    meta, text = front_matter(path)
    number = meta.get("number")
    if not isinstance(number, int) or isinstance(number, bool) or number < 0:
        raise RulesetError(f"{path.name}: 'number' must be a whole number")
    mutable = meta.get("mutable", mutable_default)
    if not isinstance(mutable, bool):
        raise RulesetError(f"{path.name}: 'mutable' must be true or false")
    if not text.strip():
        raise RulesetError(f"{path.name}: the rule has no text")
    carried = _parameters(path.name, meta.get("parameters", {}))
    strings = {}
    for key in ("title", "label", "path"):
        value = meta.get(key, "")
        if not isinstance(value, str):
            raise RulesetError(f"{path.name}: '{key}' must be text")
        strings[key] = value
    unknown = set(meta) - _RULE_KEYS - _DOCUMENT_KEYS
    if unknown:
        raise RulesetError(f"{path.name}: unknown keys {sorted(unknown)}")
    position = meta.get("position", 0)
    if not isinstance(position, int) or isinstance(position, bool) or position < 0:
        raise RulesetError(f"{path.name}: 'position' must be a whole number")
    return Rule(
        identity=number,
        number=number,
        mutable=mutable,
        text=text,
        title=strings["title"],
        parameters=carried,
        label=strings["label"],
        path=strings["path"],
        position=position,
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


_INDEX_KEYS = {
    "name",
    "language",
    "source",
    "format",
    "numbering",
    "title",
    "preamble",
    "immutable",
    "carry",
    "headings",
    "dismissed",
    "candidates",
    "mechanics",
    "house_mechanics",
}


def read_index(folder: Path) -> dict[str, Any]:
    """The folder's `ruleset.toml` (empty when there is none)."""
    index = folder / "ruleset.toml"
    if not index.is_file():
        return {}
    try:
        return tomllib.loads(index.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise RulesetError(f"{index}: {exc}") from exc


def load_folder(
    folder: Path, house: Mapping[str, str] | None = None, settled: bool = False
) -> Ruleset:
    """The folder's rules (111, 211): a value a rule sets plainly (`[[candidates]]` neither
    carried nor dismissed) is carried by that rule, any other stays prose on its house value;
    with `settled` (`init --strict`), refused while any is neither carried nor dismissed."""
    index = folder / "ruleset.toml"
    meta = read_index(folder)
    unknown = sorted(set(meta) - _INDEX_KEYS)
    if unknown:
        raise RulesetError(f"{index.name}: unknown key {unknown[0]!r}")
    if settled:
        _check_candidates(folder, meta)
    listed = meta.get("immutable", [])
    if not isinstance(listed, list) or not all(isinstance(x, str | int) for x in listed):
        raise RulesetError(f"{index.name}: 'immutable' must be a list of rule labels or numbers")
    # A rule file that does not say is mutable unless ruleset.toml lists it (102).
    rules = [parse_rule_file(p, mutable_default=True) for p in sorted(folder.glob("*.md"))]
    rules = _apply_options(index.name, rules, listed, meta.get("carry", {}), house or {})
    rules = _carry_plainly(index.name, rules, _plain_candidates(index.name, meta))
    carriers, house_mechanics = _mechanics(index.name, rules, meta)
    return _checked(
        Ruleset(
            name=str(meta.get("name", folder.name)),
            language=str(meta.get("language", "")),
            rules=tuple(sorted(rules, key=lambda r: r.number)),
            source=str(folder),
            carriers=carriers,
            house_mechanics=house_mechanics,
        )
    )


def _plain_candidates(where: str, meta: Mapping[str, Any]) -> list[findings.Candidate]:
    """The values ruleset.toml's `[[candidates]]` set plainly that the group neither carried
    (`[carry]`) nor dismissed (`findings.carried_plainly`)."""
    carry, found = meta.get("carry", {}), meta.get("candidates", [])
    dismissed = meta.get("dismissed", [])
    if not isinstance(found, list) or not isinstance(dismissed, list):
        raise RulesetError(f"{where}: 'candidates' and 'dismissed' must be lists")
    stated = [
        findings.Candidate(str(c["parameter"]), c["value"], str(c["rule"]), str(c["sentence"]))
        for c in found
        if isinstance(c, dict) and {"parameter", "value", "rule", "sentence"} <= set(c)
    ]
    group = set(carry) if isinstance(carry, dict) else set()
    return findings.carried_plainly(stated, group | {str(d) for d in dismissed})


def _carry_plainly(
    where: str, rules: list[Rule], plainly: Sequence[findings.Candidate]
) -> list[Rule]:
    """Each value a rule sets plainly, carried by that rule when the rule can hold it (a valid
    value, beside the rule's others; a cap on mutable rules the ruleset keeps); a value it
    cannot hold stays prose, and the house value holds (111, 211)."""
    out = list(rules)
    for c in plainly:
        try:
            at = _find(where, out, c.rule)
            held = {**dict(out[at].parameters), c.parameter: c.value}
            shortest = params.SPEC_BY_NAME["debate_days_min"].default
            if (
                c.parameter == "debate_days"
                and isinstance(c.value, int)
                and c.value < shortest
                and not any(dict(r.parameters).get("debate_days_min") for r in out)
            ):  # a debate the rules set shorter than 112's week is their own shortest debate
                held.setdefault("debate_days_min", c.value)
            sets = _parameters(where, held)
        except RulesetError:
            continue
        mutable = sum(1 for r in out if r.mutable)
        if c.parameter == "max_mutable_rules" and isinstance(c.value, int) and c.value < mutable:
            continue
        out[at] = replace(out[at], parameters=sets)
    return out


def carried_plainly(
    ruleset: Ruleset, found: Sequence[findings.Candidate], handled: Iterable[str]
) -> list[findings.Candidate]:
    """The values of `found` a loaded ruleset's rules carry because they set them plainly."""
    held = {(labels.shown(r), p, v) for r in ruleset.rules for p, v in r.parameters}
    held |= {(r.label, p, v) for r in ruleset.rules for p, v in r.parameters}
    held |= {(r.path, p, v) for r in ruleset.rules for p, v in r.parameters}
    held |= {(str(r.number), p, v) for r in ruleset.rules for p, v in r.parameters}
    return [
        c
        for c in findings.carried_plainly(found, handled)
        if (c.rule, c.parameter, str(c.value)) in held
    ]


def _check_candidates(folder: Path, meta: dict[str, Any]) -> None:
    """Every value a rule states for a parameter must be carried by a rule or dismissed, so the
    game never runs on a house value its own rules contradict."""
    found = meta.get("candidates", [])
    carry = meta.get("carry", {})
    dismissed = meta.get("dismissed", [])
    if not isinstance(found, list) or not isinstance(dismissed, list):
        raise RulesetError(f"{folder}/ruleset.toml: 'candidates' and 'dismissed' must be lists")
    carried = set(carry) if isinstance(carry, dict) else set()
    open_ = [
        c
        for c in found
        if isinstance(c, dict) and c.get("parameter") not in carried | set(dismissed)
    ]
    if not open_:
        return
    said = "; ".join(
        f"rule {c.get('rule')} says {c.get('parameter')} = {c.get('value')} (“{c.get('sentence')}”)"
        for c in open_
    )
    first = open_[0]
    if not isinstance(first.get("value"), int):  # a threshold the referee cannot count
        raise RulesetError(
            f"{folder}/ruleset.toml: the rules state values for parameters the referee "
            f"enforces: {said}. The referee counts only unanimity or a majority, so set "
            f'{first.get("parameter")} aside (dismissed = ["{first.get("parameter")}"], or '
            f"`--dismiss {first.get('parameter')}`): the players keep the rule's threshold "
            "themselves; then run init again"
        )
    raise RulesetError(
        f"{folder}/ruleset.toml: the rules state values for parameters the referee enforces: "
        f"{said}. Carry each by its rule ([carry] {first.get('parameter')} = "
        f'{{ rule = "{first.get("rule")}", value = {first.get("value")} }}, or `nomic-referee '
        f"import --carry {first.get('parameter')}={first.get('rule')}`) or set it aside "
        f'(dismissed = ["{first.get("parameter")}"], or `--dismiss '
        f"{first.get('parameter')}`), then run init again"
    )


def _mechanics(
    where: str, rules: list[Rule], meta: Mapping[str, Any]
) -> tuple[tuple[tuple[str, int], ...], tuple[str, ...]]:
    """ruleset.toml's `[mechanics]` (a mechanic = a rule, or a list of rules, that carry it)
    and `house_mechanics` (those that run though no rule carries them). A ruleset that says
    neither gets what its rules prove (`proven_carriers`), never the seed's by number alone."""
    names = {m.value for m in Mechanic}
    table = meta.get("mechanics", {})
    house = meta.get("house_mechanics", [])
    if not isinstance(table, dict):
        raise RulesetError(f"{where}: [mechanics] must be a table")
    if not isinstance(house, list) or not all(isinstance(h, str) for h in house):
        raise RulesetError(f"{where}: house_mechanics must be a list of mechanic names")
    carriers: list[tuple[str, int]] = []
    for name, refs in table.items():
        if name not in names:
            raise RulesetError(
                f"{where} [mechanics]: unknown mechanic {name!r} ({', '.join(sorted(names))})"
            )
        for ref in refs if isinstance(refs, list) else [refs]:
            at = _find(f"{where} [mechanics] {name}", rules, ref)
            carriers.append((name, rules[at].identity))
    for name in house:
        if name not in names:
            raise RulesetError(f"{where} house_mechanics: unknown mechanic {name!r}")
    if (table or house) and not carriers:
        # Declared, but no rule carries anything: keep the declaration (an empty tuple would
        # read as the seed's default).
        carriers.append(("", 0))
    return tuple(carriers), tuple(house)


def _find(where: str, rules: list[Rule], ref: str | int) -> int:
    found = labels.resolve(rules, ref)
    if found.rule is None:
        if found.candidates:
            named = ", ".join(labels.shown(r) + f" [{r.path}]" for r in found.candidates)
            raise RulesetError(f"{where}: {ref!r} names several rules: {named}; use a path")
        raise RulesetError(f"{where}: no rule {ref!r}")
    return rules.index(found.rule)


def _apply_options(
    where: str, rules: list[Rule], immutable: list[str | int], carry: Any, house: Mapping[str, str]
) -> list[Rule]:
    """ruleset.toml's `immutable` list and `[carry]` table, applied to the rule files (102, 111)."""
    out = list(rules)
    for ref in immutable:
        at = _find(f"{where} immutable", out, ref)
        out[at] = replace(out[at], mutable=False)
    if not isinstance(carry, dict):
        raise RulesetError(f"{where}: [carry] must be a table")
    defaults = {s.name: str(s.default) for s in params.SPECS}
    for name, spec in carry.items():
        if name not in params.SPEC_BY_NAME:
            raise RulesetError(
                f"{where} [carry]: unknown parameter {name!r} "
                f"({', '.join(s.name for s in params.SPECS)})"
            )
        fallback = house.get(name, defaults[name])
        target: Any = spec.get("rule") if isinstance(spec, dict) else spec
        value: Any = spec.get("value", fallback) if isinstance(spec, dict) else fallback
        if not isinstance(target, str | int) or isinstance(value, bool):
            raise RulesetError(
                f"{where} [carry] {name}: give a rule, or {{ rule = ..., value = N }}"
            )
        at = _find(f"{where} [carry] {name}", out, target)
        rule = out[at]
        sets = _parameters(f"{where} [carry]", {**dict(rule.parameters), name: value})
        out[at] = replace(rule, parameters=sets)
    return out


def load_document(path: Path, language: str, strict: bool = False) -> Ruleset:
    """A rule document taken in as it stands (`nomic-referee import` with no options).

    Nomic's own shape (`101. ...`, `201. ...`) keeps its numbers, the 100s immutable (102).
    Any other (a code of `§ 2.2.1.` sections, Roman laws under chapters, unnumbered paragraphs)
    gives every rule its place in the document as its number, from 101 on, and keeps its
    label, path and place; all are mutable but those whose header says `(Immutable)`. A value
    a rule sets plainly is carried by that rule, any other value its rules state stays prose;
    `strict` refuses a document whose rules state values for parameters: import it into a
    folder to carry or dismiss them, or to choose immutable rules.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RulesetError(f"{path}: not UTF-8 text ({exc})") from exc
    doc = importer.read_document(text)
    found = findings.candidates(doc)
    seeded = findings.seed_carried(doc, found)  # the seed's own carriers carry what they state
    stated = [c for c in found if c not in seeded]
    if stated and strict:  # never run on a house value the document's own rules contradict
        said_ = "; ".join(line.strip() for line in findings.describe(stated))
        raise RulesetError(
            f"the rules state values for parameters the referee enforces: {said_}. "
            + document_advice(str(path))
        )
    plainly = findings.carried_plainly(found, {c.parameter for c in seeded})
    numbered = importer.game_numbers(doc)
    said = any(s.mutability for s in doc.sections)  # `Rule 101 (Immutable)`: the header decides
    nomic = importer.nomic_style(numbered) and not said
    rules = tuple(
        Rule(
            identity=n.number,
            number=n.number,
            mutable=n.section.mutability != "immutable" and not (nomic and n.number < 200),
            text=n.section.text,
            label="" if nomic else n.section.label,
            path="" if nomic else n.section.path,
            position=0 if nomic else position,
            parameters=tuple(
                (c.parameter, str(c.value)) for c in seeded if c.rule == findings.rule_name(n)
            ),
        )
        for position, n in enumerate(numbered, start=1)
    )
    rules = tuple(_carry_plainly(str(path), list(rules), plainly))
    return _checked(Ruleset(path.stem, language, rules, str(path)))


def document_advice(source: str) -> str:
    """What to do with a document named directly as `[game] ruleset`, which has no options."""
    name = Path(source).stem or "rules"
    return (
        f"{source} is a document read as it stands, with no ruleset.toml to edit: import it "
        f"into a folder first (nomic-referee import {source} --out {name}/ --immutable RULE … "
        f"--carry NAME=RULE … --dismiss NAME …), then set [game] ruleset = "
        f'"{name}" and run init again'
    )


def _seed_texts() -> dict[int, set[str]]:
    """The seed's rule texts by number, in every built-in language, spaces folded."""
    if not _SEED:
        for language in ("it", "en"):
            for path in sorted(builtin_folder(language).glob("*.md")):
                rule = parse_rule_file(path, mutable_default=True)
                _SEED.setdefault(rule.identity, set()).add(" ".join(rule.text.split()))
    return _SEED


_SEED: dict[int, set[str]] = {}


def proven_carriers(
    rules: tuple[Rule, ...],
) -> tuple[tuple[tuple[str, int], ...], tuple[str, ...]]:
    """The mechanics of a ruleset that declares none (no `[mechanics]`, no `house_mechanics`).

    A rule 204 in another game is not the seed's 204: a rule carries a seed mechanic only when
    its identity proves it is the seed's rule, that is its number is the seed rule's and its
    text is the seed's text (in Italian or in our English). A ruleset whose every seed rule is
    so proven is the seed, read as such (empty declarations). Otherwise each proven rule
    carries its mechanics, the others carry none, and the mechanics without which no game
    could move (turns, their parts, closing a vote ...) run as house mechanics; a mechanic
    only a mutable rule grants (a bonus, a cap, appeals, deposition, an ending) does not run.
    """
    seed = _seed_texts()
    proven = {
        r.identity
        for r in rules
        if r.identity in seed and " ".join(r.text.split()) in seed[r.identity]
    }
    if proven >= set(seed):
        return (), ()
    carriers = [(s.mechanic.value, s.seed) for s in SPECS if s.seed in proven]
    house = tuple(s.mechanic.value for s in SPECS if s.house)
    if not carriers:  # declared: nothing is carried (an empty tuple would read as the seed)
        carriers.append(("", 0))
    return tuple(carriers), house


def _checked(ruleset: Ruleset) -> Ruleset:
    if not ruleset.rules:
        raise RulesetError(f"{ruleset.source}: no rules found")
    if not ruleset.carriers and not ruleset.house_mechanics:
        carriers, house = proven_carriers(ruleset.rules)
        ruleset = replace(ruleset, carriers=carriers, house_mechanics=house)
    if not any(r.mutable for r in ruleset.rules) and Path(ruleset.source).is_file():
        raise RulesetError(
            f"{ruleset.source}: there must be at least one mutable rule (115). "
            + document_advice(ruleset.source)
        )
    numbers = [r.number for r in ruleset.rules]
    duplicates = sorted({n for n in numbers if numbers.count(n) > 1})
    if duplicates:
        raise RulesetError(f"{ruleset.source}: rule numbers used twice: {duplicates}")
    if not any(r.mutable for r in ruleset.rules):  # 115
        raise RulesetError(
            f"{ruleset.source}: there must be at least one mutable rule (115); "
            "take a rule off the 'immutable' list in ruleset.toml, or set mutable = true in "
            "its file"
        )
    return ruleset


def check_playable(state: GameState) -> None:
    """Refuse a game that could not move: rule 210's cap below the mutable rules, 115 (none)."""
    count = state.mutable_count
    if count < 1:
        raise RulesetError(
            "no rule is mutable, so no proposal could ever pass (115): make at least one "
            "rule mutable (take it off ruleset.toml's 'immutable' list)"
        )
    cap = params.effective(state)["max_mutable_rules"]
    if count <= cap:
        return
    holder = params.carrier(state, "max_mutable_rules")
    if holder is not None:
        where = (
            f"rule {labels.shown(holder)} carries max_mutable_rules = {cap}: give it "
            f"{count} or more in that rule's [parameters] (or ruleset.toml [carry])"
        )
    else:
        where = (
            f"no rule carries max_mutable_rules, so the house value {cap} holds: set "
            f"[parameters] max_mutable_rules = {count} (or more) in the config"
        )
    raise RulesetError(
        f"the ruleset has {count} mutable rules but at most {cap} are allowed (rule 210), so "
        f"every proposal would be refused; {where}, or mark {count - cap} or more rules "
        "immutable (ruleset.toml 'immutable', or `nomic-referee import --immutable`)"
    )
