"""The archive's files: rules, proposals, appeals, scores and the rulesets (rules 109, 205, 213).

Layout of an archive folder (every file TOML or plain text, so it can be read, diffed and
edited by hand):

- `rules/<identity>.toml`: one file per rule, named by its first number, which never changes
  (109); the current number, text and parameters, and `[[history]]` with every change: kind,
  ordinal, number, date, proposal and its title, author, tally, the deciding mail's Message-ID,
  and the text as it stood after the change; `[[annotations]]` for rulings citing the rule.
- `rules/index.toml`: the current number of every rule -> its file, and every former number;
  `order`, the rules in force as they are read: an imported document's order (each rule file
  keeps its `label`, `path` and `position`), the game's new rules after it.
- `proposals/<hundreds>/<number>.toml`: every proposal, failed ones too, with every vote.
- `proposals/<hundreds>/<number>-debate.toml`: the proposal's debate (112), every message
  relayed to the table with its author, date and Message-ID, oldest first;
  `debate/table.toml` what was said to the table outside any proposal (SAY).
- `appeals/<id>.toml`: appeals and accusations, rulings, agreement counts, rules cited.
- `scores.toml`: the scores now and every change with its cause.
- `ruleset.txt`: the short ruleset, exactly as last mailed, under a header (205).
- `ruleset-full.md`: every rule in force with its whole history, then the repealed ones.
- `chain.toml`: the hash chain's last link and head now (213), as every mail names it in
  `X-Nomic-Chain`; it is the one file git does not keep (the head binds each mail, not each
  change): the archive's `.git/info/exclude` names it.

Rendering is a pure function of the `History` and a change number, so an archive rebuilt from
the same event log is byte for byte the same, and git can be given the archive as it stood
after each change.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import tomli_w

from referee.archive.history import (
    KIND_WORDS,
    AppealRecord,
    Change,
    DebateEntry,
    History,
    ProposalRecord,
    RuleRecord,
    RuleVersion,
)

Files = dict[str, str]
RulesetText = Callable[[Mapping[str, Any], str], str]


def rule_path(identity: int) -> str:
    return f"rules/{identity}.toml"


def proposal_path(number: int) -> str:
    return f"proposals/{number // 100:03d}xx/{number}.toml"


def debate_path(number: int | None) -> str:
    """The debate of proposal `number` beside its file; None: the table's own."""
    if number is None:
        return TABLE_PATH
    return f"proposals/{number // 100:03d}xx/{number}-debate.toml"


TABLE_PATH = "debate/table.toml"


def render_debate(entries: Iterable[DebateEntry], number: int | None) -> str:
    messages = [
        {"author": d.author, "date": d.at, "message_id": d.message_id, "text": d.text}
        for d in entries
    ]
    head: dict[str, Any] = {"proposal": number} if number is not None else {}
    return _toml({**head, "messages": messages})


def appeal_path(appeal_id: str) -> str:
    return f"appeals/{appeal_id}.toml"


def _clean(table: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in table.items() if v is not None and v != "" and v != [] and v != {}}


def _toml(data: dict[str, Any]) -> str:
    return tomli_w.dumps(data, multiline_strings=True)


def _version(v: RuleVersion, previous: RuleVersion | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "kind": v.kind,
        "ordinal": v.ordinal,
        "number": v.number,
        "date": v.at,
        "change": v.stamp,
        "proposal": v.proposal,
        "title": v.proposal_title,
        "author": v.author,
        "yes": v.yes,
        "no": v.no,
        "message_id": v.message_id,
        "note": v.note,
    }
    if previous is None or previous.mutable != v.mutable:
        entry["mutable"] = v.mutable
    if previous is None or previous.parameters != v.parameters:
        entry["parameters"] = dict(v.parameters)
    if previous is None or previous.text != v.text:
        entry["text"] = v.text
    return _clean(entry)


def render_rule(record: RuleRecord) -> str:
    now = record.current
    data: dict[str, Any] = {
        "identity": record.identity,
        "number": now.number,
        "title": now.title,
        "label": record.label,
        "path": record.path,
        "position": record.position or None,
        "mutable": now.mutable,
        "in_force": now.in_force,
        "numbers": record.numbers,
        "parameters": dict(now.parameters),
        "text": now.text,
    }
    history = []
    previous = None
    for v in record.versions:
        history.append(_version(v, previous))
        previous = v
    data = _clean(data)
    data["mutable"], data["in_force"] = now.mutable, now.in_force
    data["history"] = history
    if record.annotations:
        data["annotations"] = [
            _clean(
                {
                    "appeal": a.appeal,
                    "date": a.at,
                    "judge": a.judge,
                    "change": a.stamp,
                    "excerpt": a.excerpt,
                }
            )
            for a in record.annotations
        ]
    return _toml(data)


def render_index(rules: Iterable[RuleRecord]) -> str:
    """Every rule's file by its number now, and its former numbers; the rules in force are
    listed in the order they are read (the document's, new rules after), which `order` says."""
    current: dict[str, Any] = {}
    former: dict[str, Any] = {}
    repealed: dict[str, Any] = {}
    records = sorted(rules, key=lambda r: r.reading_key)
    order = [r.current.number for r in records if r.current.in_force]
    for record in records:
        now = record.current
        row = {"file": rule_path(record.identity), "title": now.title, "mutable": now.mutable}
        if now.in_force:
            current[str(now.number)] = _clean(row) | {"mutable": now.mutable}
        else:
            repealed[str(now.number)] = {"file": rule_path(record.identity)}
        for n in record.numbers:
            if n != now.number:
                former[str(n)] = {"now": now.number, "file": rule_path(record.identity)}
    return _toml(
        {"order": order, "in_force": current, "repealed": repealed, "former_numbers": former}
    )


def render_proposal(p: ProposalRecord) -> str:
    data: dict[str, Any] = {
        "number": p.number,
        "title": p.title,
        "kind": p.kind,
        "proposer": p.proposer,
        "submitted": p.created_at,
        "message_id": p.message_id,
        "target": p.target,
        "target_rule_file": rule_path(p.target_identity) if p.target_identity else None,
        "amendment": p.amendment,
        "status": p.status,
        "decided": p.decided_at,
        "decided_by": p.decided_message_id,
        "outcome": p.outcome,
        "yes": p.yes,
        "no": p.no,
        "sets": dict(p.sets),
        "old_text": p.old_text,
        "text": p.text,
        "diff": _unified(p.old_text, p.text, p.target) if p.old_text and p.text else None,
    }
    out = _clean(data)
    out["yes"], out["no"] = p.yes, p.no
    if len(p.texts) > 1:
        out["revisions"] = [{"change": s, "text": t} for s, t in p.texts[:-1]]
    out["votes"] = [
        {
            "voter": b.voter,
            "vote": "yes" if b.yes else "no",
            "date": b.at,
            "message_id": b.message_id,
        }
        for b in p.votes
    ]
    out["points"] = [{"player": who, "points": n, "cause": "award"} for _, who, n in p.awarded] + [
        {"player": who, "points": n, "cause": "dissent-bonus"} for _, who, n in p.bonuses
    ]
    if not out["points"]:
        del out["points"]
    return _toml(out)


def _unified(old: str, new: str, number: int | None) -> str:
    """The change a proposal makes to its rule's text, as a unified diff of lines."""
    lines = difflib.unified_diff(
        old.splitlines(), new.splitlines(), f"rule {number}", "proposal", lineterm="", n=1
    )
    return "\n".join(lines)


def render_appeal(a: AppealRecord) -> str:
    data = _clean(
        {
            "id": a.id,
            "kind": a.kind,
            "appellant": a.appellant,
            "opened": a.opened_at,
            "message_id": a.message_id,
            "judge": a.judge,
            "status": a.status,
            "cites": a.cites,
            "question": a.question,
        }
    )
    data["agree"], data["disagree"] = a.agree, a.disagree
    data["rulings"] = [
        _clean(
            {
                "judge": r.judge,
                "date": r.at,
                "verdict": r.verdict,
                "message_id": r.message_id,
                "text": r.text,
            }
        )
        for r in a.rulings
    ]
    return _toml(data)


def render_scores(history: History, stamp: int | None) -> str:
    standings = history.standings(stamp)
    return _toml(
        {
            "scores": standings,
            "changes": [
                _clean(
                    {
                        "date": s.at,
                        "player": s.player,
                        "delta": s.delta,
                        "score": s.score,
                        "cause": s.cause,
                        "proposal": s.proposal,
                        "appeal": s.appeal,
                    }
                )
                for s in history.scores
                if stamp is None or s.stamp <= stamp
            ],
        }
    )


def _last_change(history: History, stamp: int | None) -> Change | None:
    changes = history.changes if stamp is None else history.changes[:stamp]
    for change in reversed(changes):
        if change.rules:
            return change
    return None


def _highest_proposal(history: History, stamp: int | None) -> int | None:
    numbers = [n for n, p in history.proposals.items() if stamp is None or p.stamp <= stamp]
    return max(numbers) if numbers else None


def render_short_ruleset(history: History, stamp: int | None, mail_text: RulesetText) -> str:
    """The ruleset exactly as last mailed to the players, under Agora's SLR-style header."""
    mail = history.last_ruleset(stamp)
    rules = history.rules_in_force(stamp)
    mutable = sum(1 for r in rules if r.current.mutable)
    last = _last_change(history, stamp)
    highest = _highest_proposal(history, stamp)
    it = history.language == "it"
    lines = [
        f"{history.name}: {'regolamento breve' if it else 'short ruleset'}",
        f"{'Data' if it else 'Date'}: {(mail.at if mail else history.started_at).isoformat()}",
        (
            f"{'Regole in vigore' if it else 'Rules in force'}: {len(rules)} "
            f"({len(rules) - mutable} {'immutabili' if it else 'immutable'}, "
            f"{mutable} {'mutabili' if it else 'mutable'})"
        ),
        f"{'Ultima modifica' if it else 'Last change'}: "
        + (f"{last.summary} ({last.at.isoformat()})" if last else "-"),
        f"{'Proposta più alta' if it else 'Highest proposal'}: {highest or '-'}",
        "",
        "Indice" if it else "Contents",
    ]
    for r in rules:
        now = r.current
        flag = "M" if now.mutable else "I"
        lines.append(f"  {now.number} [{flag}] {now.title}".rstrip())
    lines += ["", "-" * 72, ""]
    body = mail_text(mail.data, mail.kind) if mail else ""
    return "\n".join(lines) + body


def _describe(v: RuleVersion, language: str) -> str:
    words = KIND_WORDS["it" if language == "it" else "en"]
    head = f"{words.get(v.kind, v.kind)}({v.ordinal})"
    by = ""
    if v.proposal is not None:
        title = f" '{v.proposal_title}'" if v.proposal_title else ""
        who = f" ({v.author})" if v.author else ""
        by = f" {'dalla proposta' if language == 'it' else 'by Proposal'} {v.proposal}{title}{who}"
    tally = f", {v.yes}-{v.no}" if v.yes is not None else ""
    note = f" [{v.note}]" if v.note else ""
    return f"{head}{by}, {v.at.date().isoformat()}{tally}{note}"


def render_full_ruleset(history: History, stamp: int | None) -> str:
    it = history.language == "it"
    out = [f"# {history.name}: {'regolamento completo' if it else 'full ruleset'}", ""]
    in_force = history.rules_in_force(stamp)
    for record in in_force:
        out += _full_rule(record, history.language)
    gone = [
        r
        for r in (x.as_of(stamp) for x in history.rules.values())
        if r is not None and not r.current.in_force
    ]
    if gone:
        out += [f"# {'Regole abrogate' if it else 'Repealed rules'}", ""]
        for record in sorted(gone, key=lambda r: r.current.number):
            out += _full_rule(record, history.language, text=False)
    return "\n".join(out)


def _full_rule(record: RuleRecord, language: str, text: bool = True) -> list[str]:
    now = record.current
    it = language == "it"
    kind = (
        ("mutabile" if it else "mutable") if now.mutable else ("immutabile" if it else "immutable")
    )
    title = f" — {now.title}" if now.title else ""
    former = [n for n in record.numbers if n != now.number]
    lines = [f"## {'Regola' if it else 'Rule'} {now.number} ({kind}){title}", ""]
    if former:
        lines += [f"{'Già' if it else 'Formerly'}: {', '.join(map(str, former))}", ""]
    if text:
        lines += [now.text, ""]
    if now.parameters:
        lines += [
            ("Parametri" if it else "Parameters")
            + ": "
            + ", ".join(f"{k} = {v}" for k, v in now.parameters),
            "",
        ]
    lines += [f"{'Storia' if it else 'History'}:", ""]
    lines += [f"- {_describe(v, language)}" for v in record.versions]
    for a in record.annotations:
        lines.append(f"- {'Citata in' if it else 'Cited in'} {a.appeal} ({a.judge}, {a.at.date()})")
    lines.append("")
    return lines


def render_meta(history: History, stamp: int | None) -> str:
    count = len(history.changes) if stamp is None else stamp
    return _toml(
        {
            "game": history.name,
            "language": history.language,
            "started": history.started_at,
            "changes": count,
        }
    )


CHAIN_PATH = "chain.toml"


def render_chain(link: int, head: str) -> str:
    """The hash chain's last link (213): each player's mail names the same head in
    `X-Nomic-Chain`, and `nomic-referee verify` recomputes it from the mail."""
    return _toml({"link": link, "head": head})


def global_files(
    history: History, stamp: int | None, mail_text: RulesetText, change: Change | None = None
) -> Files:
    """The files about the whole game; with `change`, only those it can have changed."""
    every = change is None or change.ordinal == 1
    rules = every or bool(change and (change.rules or change.annotated))
    files = {"archive.toml": render_meta(history, stamp)}
    if rules:
        records = [r for r in (x.as_of(stamp) for x in history.rules.values()) if r is not None]
        files["rules/index.toml"] = render_index(records)
        files["ruleset-full.md"] = render_full_ruleset(history, stamp)
    if every or (change is not None and change.scores):
        files["scores.toml"] = render_scores(history, stamp)
    # the ruleset mail (205) goes out when the rules or the scores change; the header names
    # the highest proposal
    if every or rules or (change is not None and (change.scores or change.proposal)):
        files["ruleset.txt"] = render_short_ruleset(history, stamp, mail_text)
    return files


def render_archive(history: History, mail_text: RulesetText, stamp: int | None = None) -> Files:
    """Every file of the archive as it stood after change `stamp` (None: now)."""
    files = global_files(history, stamp, mail_text)
    for record in history.rules.values():
        seen = record.as_of(stamp)
        if seen is not None:
            files[rule_path(record.identity)] = render_rule(seen)
    for p in history.proposals.values():
        seen_p = p.as_of(stamp)
        if seen_p is not None:
            files[proposal_path(p.number)] = render_proposal(seen_p)
            if seen_p.debate:
                files[debate_path(p.number)] = render_debate(seen_p.debate, p.number)
    table = [d for d in history.table if stamp is None or d.stamp <= stamp]
    if table:
        files[TABLE_PATH] = render_debate(table, None)
    for a in history.appeals.values():
        seen_a = a.as_of(stamp)
        if seen_a is not None:
            files[appeal_path(a.id)] = render_appeal(seen_a)
    if stamp is None and history.chain is not None:
        files[CHAIN_PATH] = render_chain(*history.chain)
    return files


def change_files(history: History, change: Change, mail_text: RulesetText) -> Files:
    """The files change `change` touched, as they stood right after it."""
    k = change.ordinal
    files = global_files(history, k, mail_text, change)
    for identity in (*change.rules, *change.annotated):
        seen = history.rules[identity].as_of(k)
        if seen is not None:
            files[rule_path(identity)] = render_rule(seen)
    for number in change.proposals:
        seen_p = history.proposals[number].as_of(k)
        if seen_p is not None:
            files[proposal_path(number)] = render_proposal(seen_p)
            if seen_p.debate:
                files[debate_path(number)] = render_debate(seen_p.debate, number)
    if change.kind == "debate" and change.proposal is None:
        files[TABLE_PATH] = render_debate([d for d in history.table if d.stamp <= k], None)
    for appeal_id in change.appeals:
        seen_a = history.appeals[appeal_id].as_of(k)
        if seen_a is not None:
            files[appeal_path(appeal_id)] = render_appeal(seen_a)
    return files


class ArchiveWriter:
    """Writes the archive now, rendering only the files whose content can have changed.

    Each file has a key made of the change numbers of what it shows; a file whose key is the
    same as at the last write is neither rendered nor compared. The first write renders all
    and writes only what differs from the disk.
    """

    def __init__(self, folder: Path, mail_text: RulesetText) -> None:
        self.folder = folder
        self.mail_text = mail_text
        self.keys: dict[str, tuple[int | str, ...]] = {}

    def write(self, history: History) -> list[Path]:
        files: Files = {}
        keys: dict[str, tuple[int | str, ...]] = {}

        def wanted(path: str, key: tuple[int | str, ...]) -> bool:
            keys[path] = key
            return self.keys.get(path) != key

        rules_key = (0, 0)
        for record in history.rules.values():
            noted = record.annotations[-1].stamp if record.annotations else 0
            key: tuple[int | str, ...] = (record.current.stamp, len(record.versions), noted)
            rules_key = max(rules_key, (record.current.stamp, noted))
            if wanted(rule_path(record.identity), key):
                files[rule_path(record.identity)] = render_rule(record)
        for p in history.proposals.values():
            key = (p.stamp, p.decided_stamp or 0, len(p.ballots), len(p.texts), len(p.awarded))
            if wanted(proposal_path(p.number), (*key, len(p.bonuses))):
                files[proposal_path(p.number)] = render_proposal(p)
            if p.debate and wanted(debate_path(p.number), (len(p.debate),)):
                files[debate_path(p.number)] = render_debate(p.debate, p.number)
        if history.table and wanted(TABLE_PATH, (len(history.table),)):
            files[TABLE_PATH] = render_debate(history.table, None)
        for a in history.appeals.values():
            key = (a.stamp, a.settled_stamp or 0, len(a.rulings), len(a.agreements))
            if wanted(appeal_path(a.id), (*key, a.judge, a.status)):
                files[appeal_path(a.id)] = render_appeal(a)
        whole = (*rules_key, len(history.rules))
        if wanted("archive.toml", (len(history.changes),)):
            files["archive.toml"] = render_meta(history, None)
        if wanted("rules/index.toml", whole):
            records = list(history.rules.values())
            files["rules/index.toml"] = render_index(records)
        if wanted("ruleset-full.md", whole):
            files["ruleset-full.md"] = render_full_ruleset(history, None)
        if wanted("scores.toml", (len(history.scores),)):
            files["scores.toml"] = render_scores(history, None)
        mail = history.last_ruleset()
        highest = max(history.proposals, default=0)
        if wanted("ruleset.txt", (*whole, mail.stamp if mail else 0, highest)):
            files["ruleset.txt"] = render_short_ruleset(history, None, self.mail_text)
        if history.chain is not None and wanted(CHAIN_PATH, history.chain):
            files[CHAIN_PATH] = render_chain(*history.chain)
        written = write_files(self.folder, files)
        self.keys = keys
        return written


def write_files(folder: Path, files: Mapping[str, str]) -> list[Path]:
    """Write what differs from the disk, each file atomically; returns the files written."""
    changed: list[Path] = []
    for relative in sorted(files):
        path = folder / relative
        data = files[relative].encode("utf-8")
        try:
            if path.stat().st_size == len(data) and path.read_bytes() == data:
                continue
        except FileNotFoundError:
            pass
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_bytes(data)
        os.replace(temporary, path)  # a reader never sees half a file
        changed.append(path)
    return changed
