"""Benchmark: the archive and the website for a history the size of Agora's (issue 9).

Generates a game's record with 10,000 proposals (most adopted, a quarter failed, each with a
ballot per player and an award) over 300 rules in force, then measures, in the same run:

- building the archive (one TOML file per rule with every version, per proposal, per appeal,
  the index, scores and both rulesets) into an empty folder;
- building the website (a page per rule and per proposal, lists, chart, feed, search index);
- an incremental update of both after one more adopted proposal (pages whose content did not
  change are neither rendered nor written);
- the git history for the incremental update (one more commit onto a repository holding the
  archive as it stood), and the full git history of a smaller game (`--git-proposals`);
- the baseline: copying the same number of files (shutil.copy2) into an empty folder.

Time is wall clock; memory is the process's peak resident set (ru_maxrss).

    python bench/archive_bench.py [--proposals 10000] [--rules 300] [--git-proposals 500]
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from referee.archive.gitlog import commit_history
from referee.archive.history import (
    Ballot,
    Change,
    History,
    ProposalRecord,
    RuleRecord,
    RulesetMail,
    RuleVersion,
    ScoreChange,
)
from referee.archive.site import build_site
from referee.archive.writer import ArchiveWriter
from referee.config import load_settings
from referee.core import view
from referee.core.mechanics import citations
from referee.core.model import GameState, Player, Rule

START = datetime(2020, 1, 1, 9, 0, tzinfo=UTC)
WORDS = (
    "player",
    "points",
    "rule",
    "proposal",
    "vote",
    "King",
    "turn",
    "round",
    "score",
    "majority",
    "text",
    "change",
    "shall",
    "may",
    "must",
    "every",
    "each",
    "who",
    "when",
    "the",
    "a",
    "of",
    "in",
    "to",
    "and",
    "or",
    "not",
    "any",
    "no",
    "more",
    "than",
)
NAMES = ("Ada", "Bob", "Carla", "Dan", "Eva", "Fabio", "Gina", "Hugo")
PLAYERS = [f"Player {name}" for name in NAMES]


def sentence(rng: random.Random, words: int = 14) -> str:
    body = " ".join(rng.choice(WORDS) for _ in range(words))
    return body[0].upper() + body[1:] + "."


def generate(proposals: int, rules: int, seed: int = 9) -> History:
    """A consistent record: every change a rule could have had, in date order (109, 103)."""
    rng = random.Random(seed)
    h = History("Agora-sized Nomic", "en", START)
    for index, name in enumerate(PLAYERS):
        h.players[f"p{index}@example.org"] = name
    h.changes.append(Change(1, START, "game-started", "The initial ruleset", "", "", ""))
    numbers = list(range(101, 118)) + list(range(201, 201 + rules - 17))
    for n in numbers:
        text = " ".join(sentence(rng) for _ in range(rng.randint(3, 8)))
        version = RuleVersion(
            1, "enacted", 1, n, START, text, n >= 200, True, (), f"Rule {n}", note="initial"
        )
        h.rules[n] = RuleRecord(n, [version])
    h.changes[0].rules = tuple(h.rules)
    scores = dict.fromkeys(PLAYERS, 0)
    for index, name in enumerate(PLAYERS):
        h.scores.append(ScoreChange(1, START, name, 0, 0, "start"))
        del index
    at = START
    number = max(numbers) + 1
    for _ in range(proposals):
        add_proposal(h, rng, number, at, scores, adopt=rng.random() > 0.25)
        number += 1
        at += timedelta(hours=6)
    return h


def _in_force(h: History, mutable: bool) -> list[RuleRecord]:
    return [r for r in h.rules.values() if r.current.in_force and r.current.mutable == mutable]


def add_proposal(
    h: History,
    rng: random.Random,
    number: int,
    at: datetime,
    scores: dict[str, int],
    adopt: bool,
) -> None:
    """Submission, ballots, the result and the award: three changes, like a real turn."""
    live = _in_force(h, True)
    target_count = 300
    roll = rng.random()
    total = sum(1 for r in h.rules.values() if r.current.in_force)
    if total < target_count and roll < 0.3:
        kind = "enact"
    elif total > target_count and roll < 0.3:
        kind = "repeal"
    else:
        kind = rng.choice(
            ["amend"] * 7 + ["enact-amendment"] * 2 + ["transmute", "enact", "repeal"]
        )
    if kind == "transmute":  # either way: 110
        live = [r for r in h.rules.values() if r.current.in_force]
    if not live:
        kind = "enact"
    target = rng.choice(live) if kind != "enact" else None
    old = target.current.text if target else ""
    if kind == "amend" and target is not None:
        words = old.split()
        spot = rng.randrange(len(words))
        words[spot] = rng.choice(WORDS)
        text = " ".join(words[:120]) + (" " + sentence(rng) if len(words) < 90 else "")
    elif kind in ("enact", "enact-amendment"):
        text = " ".join(sentence(rng) for _ in range(rng.randint(2, 6)))
    else:
        text = ""
    proposer_index = rng.randrange(len(PLAYERS))
    proposer = PLAYERS[proposer_index]
    email = f"p{proposer_index}@example.org"
    title = (
        text.split(".")[0][:80]
        if text
        else f"{kind.title()} rule {target.current.number if target else ''}"
    )
    submitted = h.next_stamp
    mid = f"<bench-{number}-@example.org>"
    record = ProposalRecord(
        stamp=submitted,
        number=number,
        title=title,
        kind=kind,
        proposer=proposer,
        proposer_email=email,
        created_at=at,
        message_id=mid,
        target=target.current.number if target else None,
        target_identity=target.identity if target else None,
        amendment=None,
        old_text=old,
        texts=[(submitted, text)],
        sets=(),
    )
    h.proposals[number] = record
    h.changes.append(
        Change(
            submitted,
            at,
            "proposal-submitted",
            f"Proposal {number} submitted",
            proposer,
            email,
            mid,
            proposal=number,
            proposals=(number,),
        )
    )
    decided = h.next_stamp
    voted = at + timedelta(hours=3)
    for index, voter in enumerate(PLAYERS):
        yes = adopt if rng.random() < 0.8 else not adopt
        record.ballots.append(
            Ballot(
                decided,
                voter,
                f"p{index}@example.org",
                yes,
                voted,
                f"<vote-{number}-{index}@example.org>",
            )
        )
    decided_at = at + timedelta(hours=4)
    record.status = "adopted" if adopt else "rejected"
    record.decided_stamp, record.decided_at = decided, decided_at
    record.decided_message_id = record.ballots[-1].message_id
    record.outcome = "adopted" if adopt else "failed"
    changed: tuple[int, ...] = ()
    if adopt:
        if kind == "enact":
            version = RuleVersion(
                decided, "enacted", 1, number, decided_at, text, True, True, (), title
            )
            h.rules[number] = RuleRecord(number, [version])
            changed = (number,)
        else:
            assert target is not None
            now = target.current
            past = {"amend": "amended", "repeal": "repealed", "transmute": "transmuted"}
            new_kind = past.get(kind, "amendment-enacted")
            new_text = text if kind == "amend" else now.text
            if kind == "enact-amendment":
                new_text = f"{now.text}\n\n[{number}.1] {text}"
            ordinal = 1 + sum(1 for v in target.versions if v.kind == new_kind)
            target.versions.append(
                replace(
                    now,
                    stamp=decided,
                    kind=new_kind,
                    ordinal=ordinal,
                    number=number,
                    at=decided_at,
                    text=new_text,
                    mutable=not now.mutable if kind == "transmute" else now.mutable,
                    in_force=kind != "repeal",
                    proposal=number,
                    proposal_title=title,
                    author=proposer,
                    author_email=email,
                    yes=record.yes,
                    no=record.no,
                    message_id=record.decided_message_id,
                    note="",
                )
            )
            changed = (target.identity,)
    word = "adopted" if adopt else "failed"
    h.changes.append(
        Change(
            decided,
            decided_at,
            f"proposal-{record.status}",
            f"Proposal {number} '{title}' {word}",
            proposer,
            email,
            record.decided_message_id,
            proposal=number,
            rules=changed,
            proposals=(number,),
        )
    )
    awarded = h.next_stamp
    points = rng.randint(1, 10)
    scores[proposer] += points
    record.awarded.append((awarded, proposer, points))
    h.scores.append(
        ScoreChange(
            awarded,
            decided_at + timedelta(hours=1),
            proposer,
            points,
            scores[proposer],
            "award",
            number,
        )
    )
    h.changes.append(
        Change(
            awarded,
            decided_at + timedelta(hours=1),
            "award",
            f"Points for {proposer}",
            PLAYERS[0],
            "p0@example.org",
            f"<award-{number}@example.org>",
            proposal=number,
            proposals=(number,),
            scores=True,
        )
    )
    h.ruleset_mails = [RulesetMail(awarded, decided_at, {"lazy": True})]


def mail_text_for(h: History) -> Callable[[Any, str], str]:
    """The real ruleset mail (205) for the record's last state, rendered by the templates."""
    from referee.archive import ruleset_mail_text

    settings = load_settings(_config())
    render = ruleset_mail_text(settings)
    cache: dict[int, str] = {}

    def text(data: Any, kind: str) -> str:
        key = len(h.changes)
        if key not in cache:
            rules = tuple(
                Rule(
                    r.identity, r.current.number, r.current.mutable, r.current.text, r.current.title
                )
                for r in h.rules_in_force()
            )
            players = tuple(
                Player(name, email, name.split()[-1], h.standings().get(name, 0))
                for email, name in h.players.items()
            )
            state = GameState(h.name, h.language, h.started_at, players, "p0@example.org", rules)
            cache.clear()
            data = {
                "changes": {"rules": [], "scores": []},
                **view.ruleset_data(state),
                "cites": citations(state),
            }
            cache[key] = render(data, "ruleset")
        return cache[key]

    return text


def _config() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="bench-config-"))
    path = folder / "game.toml"
    path.write_text(
        '[game]\nname = "Agora-sized Nomic"\naddress = "referee@nomic.example"\nlanguage = "en"\n'
        '[[players]]\nname = "Player Ada"\nemail = "p0@example.org"\nking = true\n'
        '[[players]]\nname = "Player Bob"\nemail = "p1@example.org"\n',
        encoding="utf-8",
    )
    return path


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(what: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = what()
    return time.perf_counter() - start, result


def count_files(folder: Path) -> int:
    return sum(1 for p in folder.rglob("*") if p.is_file() and ".git" not in p.parts)


def copy_files(source: Path, target: Path) -> int:
    copied = 0
    for path in source.rglob("*"):
        if path.is_file() and ".git" not in path.parts:
            out = target / path.relative_to(source)
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, out)
            copied += 1
    return copied


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--proposals", type=int, default=10_000)
    parser.add_argument("--rules", type=int, default=300)
    parser.add_argument("--git-proposals", type=int, default=500)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="archive-bench-"))
    try:
        took, h = timed(lambda: generate(args.proposals, args.rules))
        in_force = len(h.rules_in_force())
        print(
            f"history: {len(h.proposals)} proposals, {in_force} rules in force "
            f"({len(h.rules)} ever), {len(h.changes)} changes; generated in {took:.1f} s"
        )
        mail_text = mail_text_for(h)
        archive, site = work / "archive", work / "site"
        writer = ArchiveWriter(archive, mail_text)
        took_a, written = timed(lambda: writer.write(h))
        print(
            f"archive build : {took_a:7.2f} s  {len(written):6d} files  peak RSS {peak_mb():.0f} MB"
        )
        took_s, result = timed(lambda: build_site(h, site))
        print(
            f"site build    : {took_s:7.2f} s  {result.written:6d} files  "
            f"peak RSS {peak_mb():.0f} MB"
        )
        files = count_files(archive) + count_files(site)
        took_c, _ = timed(
            lambda: (copy_files(archive, work / "copy-a"), copy_files(site, work / "copy-s"))
        )
        print(f"baseline copy : {took_c:7.2f} s  {files:6d} files (shutil.copy2, same files)")
        # a snapshot commit holding the archive as it stands, then one more adopted proposal
        snapshot = History(h.name, h.language, h.started_at, h.rules, h.proposals, h.appeals)
        snapshot.scores, snapshot.players = h.scores, h.players
        snapshot.ruleset_mails = h.ruleset_mails
        snapshot.changes = [
            replace(h.changes[-1], rules=tuple(h.rules), proposals=tuple(h.proposals))
        ]
        snapshot.changes[0].ordinal = len(h.changes)
        took_g0, _ = timed(lambda: _snapshot_commit(archive, snapshot, mail_text, len(h.changes)))
        rng = random.Random(2)
        scores = h.standings()
        at = h.changes[-1].at + timedelta(hours=6)
        add_proposal(h, rng, max(h.proposals) + 1, at, scores, adopt=True)
        took_ia, changed = timed(lambda: writer.write(h))
        took_ig, commits = timed(
            lambda: commit_history(archive, h, mail_text, "referee@nomic.example")
        )
        took_is, result2 = timed(lambda: build_site(h, site, remembered=result.keys))
        print(
            f"one more adopted proposal: archive {took_ia:.2f} s ({len(changed)} files), "
            f"git {took_ig:.2f} s ({commits} commits), site {took_is:.2f} s "
            f"({result2.rendered} pages rendered, {result2.written} files written)"
        )
        touched = [*changed, *(site / name for name in ("index.html", "proposals.html"))]
        took_ic, _ = timed(
            lambda: [shutil.copy2(p, work / f"one-{i}") for i, p in enumerate(touched)]
        )
        print(f"  baseline: copying those {len(touched)} files takes {took_ic:.3f} s")
        print(f"  (snapshot commit of the whole archive: {took_g0:.2f} s)")
        small = generate(args.git_proposals, min(args.rules, 60), seed=4)
        small_text = mail_text_for(small)
        took_gs, made = timed(
            lambda: commit_history(work / "git-small", small, small_text, "referee@nomic.example")
        )
        print(
            f"full git history of a {args.git_proposals}-proposal game: {made} commits in "
            f"{took_gs:.2f} s ({made / took_gs:.0f} commits/s)"
        )
        print(f"peak RSS {peak_mb():.0f} MB")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _snapshot_commit(folder: Path, snapshot: History, mail_text: Any, ordinal: int) -> int:
    return commit_history(folder, snapshot, mail_text, "referee@nomic.example")


if __name__ == "__main__":
    main()
