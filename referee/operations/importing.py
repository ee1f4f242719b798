"""`nomic-referee import`: a rule document read into a ruleset folder to review (101, 102).

`import_rules` decides everything the command does: the rules made immutable (by label, by
heading, by power), the parameters carried by a rule or dismissed (111, 209, 210), the
language, and the folder written, checked first by loading it as `init` will; it returns an
`ImportReport` that the CLI prints. A choice that names nothing real is refused with
`ImportRefused`, whose message is the one line the command prints.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from referee import findings, importer, rulebook
from referee.core import params
from referee.counts import counted


class ImportRefused(ValueError):
    """A document that cannot be read, or a choice that names no rule, heading or parameter."""


@dataclass(frozen=True)
class ImportChoices:
    """What the person importing chose: as the command's options give them."""

    immutable: tuple[str, ...] = ()  # rules by label, path or number (101)
    immutable_under: tuple[str, ...] = ()  # headings: every rule under each
    immutable_power: float | None = None  # rules whose header gives this power or more
    carry: tuple[str, ...] = ()  # NAME=RULE: the rule that carries a game parameter
    dismiss: tuple[str, ...] = ()  # parameters whose stated value is set aside
    language: str = ""  # the document's language; "" detects it


@dataclass(frozen=True)
class ImportReport:
    """What was read and written, and what the folder still waits for before `init`."""

    out: Path
    summary: tuple[str, ...]  # what the reader found, rule by rule
    language: str  # the line naming the language chosen
    stated: tuple[str, ...]  # the values the rules state for enforced parameters
    waiting: tuple[str, ...]  # what becomes of values neither carried nor dismissed (prose)
    unenforced: tuple[tuple[str, tuple[str, ...]], ...]  # mechanics left to the players
    rules: int
    mutable: int
    warnings: tuple[str, ...]  # what makes the result look wrong (`--strict` exits 1)

    def lines(self) -> list[str]:
        """The report as the command prints it."""
        lines = ["\n".join(self.summary), self.language]
        if self.stated:
            lines.append("values the rules state for parameters the referee enforces:")
            lines.append("\n".join(self.stated))
            lines.extend(self.waiting)
        if self.unenforced:
            lines.append("the referee will not enforce these; they stay with the players:")
            for name, where in self.unenforced:
                shown = ", ".join(where[:6]) + (" …" if len(where) > 6 else "")
                lines.append(f"  {name} (rule {shown})")
        lines.append(
            f"wrote {counted(self.rules, 'rule')} to {self.out} ({self.mutable} mutable); "
            "review them, then point [game] ruleset at the folder and run init"
        )
        return lines


def import_rules(document: Path, out: Path, choices: ImportChoices) -> ImportReport:
    """Read `document`, apply `choices`, write the ruleset folder `out` and report."""
    try:
        text = document.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportRefused(f"cannot read {document}: {exc}") from exc
    pairs = _carried(choices)
    doc = importer.read_document(text)
    marked = _immutable(doc, choices)
    stated = findings.candidates(doc)
    seeded = findings.seed_carried(doc, stated)
    chosen_by_group = {name for name, _ in pairs} | set(choices.dismiss)
    for name, ref in pairs:
        if any(c.parameter == name and c.rule == ref and not c.countable for c in stated):
            raise ImportRefused(
                f"--carry {name}={ref}: rule {ref} states a threshold the referee cannot count "
                f"(it counts only unanimity or a majority); dismiss it (--dismiss {name})"
            )
    # the seed's own carriers carry what they state, as the shipped rulesets' rules do
    pairs += [(c.parameter, c.rule) for c in seeded if c.parameter not in chosen_by_group]
    given = bool(choices.language.strip())
    chosen = choices.language.strip() or importer.detect_language(text)
    options = importer.Options(
        chosen,
        tuple(dict.fromkeys(marked)),
        tuple(pairs),
        tuple((c.parameter, c.value, c.rule, c.sentence) for c in stated),
        choices.dismiss,
    )
    ruleset = _written(doc, options, document, out)
    handled = {name for name, _ in pairs} | set(choices.dismiss)
    plainly = rulebook.carried_plainly(ruleset, stated, handled) if stated else []
    return ImportReport(
        out=out,
        summary=tuple(importer.summary(doc)),
        language=importer.language_line(chosen, given=given),
        stated=tuple(findings.describe(stated, seeded, plainly)) if stated else (),
        waiting=tuple(findings.waiting(stated, handled, plainly, str(out))) if stated else (),
        unenforced=tuple(findings.unenforced(doc)),
        rules=len(ruleset.rules),
        mutable=sum(1 for r in ruleset.rules if r.mutable),
        warnings=tuple(importer.warnings(doc)),
    )


def _carried(choices: ImportChoices) -> list[tuple[str, str]]:
    """The `--carry NAME=RULE` pairs, and every `--dismiss` checked to name a parameter."""
    pairs = []
    for item in choices.carry:
        name, sep, ref = item.partition("=")
        if not sep or not name.strip() or not ref.strip():
            raise ImportRefused(
                f"--carry {item!r}: write NAME=RULE, e.g. --carry 'winning_score=§ 5.4'"
            )
        pairs.append((name.strip(), ref.strip()))
    for name in choices.dismiss:
        if name not in params.SPEC_BY_NAME:
            raise ImportRefused(
                f"--dismiss {name!r}: not a parameter ({', '.join(params.SPEC_BY_NAME)})"
            )
    return pairs


def _immutable(doc: importer.Document, choices: ImportChoices) -> list[str]:
    """The rules made immutable: named, under a heading, or of a power (101)."""
    marked = list(choices.immutable)
    for heading in choices.immutable_under:
        under = importer.immutable_under(doc, heading)
        if not under:
            raise ImportRefused(
                f"--immutable-under {heading!r}: no heading of that name has rules under it"
            )
        marked += under
    if choices.immutable_power is not None:
        marked += importer.immutable_by_power(doc, choices.immutable_power)
    return marked


def _written(
    doc: importer.Document, options: importer.Options, document: Path, out: Path
) -> rulebook.Ruleset:
    """The folder written to `out`, once it loads as `init` will load it: the options must
    name real rules, so a scratch copy is loaded first."""
    try:
        with tempfile.TemporaryDirectory() as scratch:
            importer.write_folder(doc, options, str(document), Path(scratch))
            ruleset = rulebook.load_folder(Path(scratch), settled=False)
        importer.write_folder(doc, options, str(document), out)
    except (OSError, rulebook.RulesetError) as exc:
        raise ImportRefused(str(exc)) from exc
    return ruleset
