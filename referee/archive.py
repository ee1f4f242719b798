"""The rule archive on disk: one file per rule with its whole history (rules 109, 205, 213).

Like Agora's ruleset repository: `rules/<identity>.md` holds a rule's current text and a
`history` of every number it has had, each change tied to its proposal and date, repeals
included. `ruleset.md` is the ruleset in force and `scores.md` the scores, as mailed to the
players (205). Writing is idempotent: a file is rewritten only when its content changes, so
the folder can live in git and every commit is a real change. It can be rebuilt at any time
from the event log.
"""

from __future__ import annotations

import json
from pathlib import Path

from referee.core.model import GameState, Rule
from referee.core.view import scores_data


def _rule_file(rule: Rule) -> str:
    lines = [
        "+++",
        f"identity = {rule.identity}",
        f"number = {rule.number}",
        f"mutable = {'true' if rule.mutable else 'false'}",
        f"in_force = {'true' if rule.in_force else 'false'}",
        f"title = {json.dumps(rule.title, ensure_ascii=False)}",
    ]
    if rule.parameters:
        lines.append(
            "parameters = { "
            + ", ".join(f"{name} = {json.dumps(value)}" for name, value in rule.parameters)
            + " }"
        )
    for entry in rule.history:
        lines += [
            "[[history]]",
            f"number = {entry.number}",
            f"event = {json.dumps(entry.event)}",
            f"at = {entry.at.isoformat()}",
        ]
        if entry.proposal is not None:
            lines.append(f"proposal = {entry.proposal}")
        if entry.note:
            lines.append(f"note = {json.dumps(entry.note, ensure_ascii=False)}")
    lines.append("+++")
    return "\n".join(lines) + "\n" + rule.full_text + "\n"


def _ruleset(state: GameState) -> str:
    parts = [f"# {state.name}: the rules in force\n"]
    for rule in state.rules_in_force:
        kind = "mutable" if rule.mutable else "immutable"
        title = f" — {rule.title}" if rule.title else ""
        parts.append(f"## Rule {rule.number} ({kind}){title}\n\n{rule.full_text}\n")
    return "\n".join(parts)


def _scores(state: GameState) -> str:
    rows = [f"# {state.name}: scores\n", "| player | points | |", "|---|---:|---|"]
    for p in scores_data(state):
        note = "King" if p["king"] else ("left" if not p["active"] else "")
        rows.append(f"| {p['name']} | {p['score']} | {note} |")
    return "\n".join(rows) + "\n"


def write_archive(state: GameState, folder: Path) -> list[Path]:
    """Bring the archive in `folder` up to date; returns the files that changed."""
    wanted: dict[Path, str] = {
        folder / "rules" / f"{rule.identity}.md": _rule_file(rule) for rule in state.rules
    }
    wanted[folder / "ruleset.md"] = _ruleset(state)
    wanted[folder / "scores.md"] = _scores(state)
    changed: list[Path] = []
    for path, text in wanted.items():
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.write_text(text, encoding="utf-8")
        temporary.replace(path)  # atomic: a reader never sees half a file
        changed.append(path)
    return changed
