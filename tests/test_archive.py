"""The rule archive: files, git history, read-back, check and diff (issue 9; 103, 109, 213)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from dulwich import porcelain
from dulwich.repo import Repo

from referee import rulebook
from referee.archive import Keeper
from referee.archive.check import check_archive
from referee.archive.gitlog import log
from referee.archive.writer import render_archive, write_files
from referee.config import Settings, load_settings
from referee.runner import Service
from referee.service import Referee
from referee.store.store import Store
from tests.archive_games import example_game, with_game_keys
from tests.conftest import write_config
from tests.helpers import CARLA, DAY, T0, mail

CLI = [sys.executable, "-c", "from referee.cli import main; main()"]


def toml(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def write(settings: Settings, folder: Path) -> Keeper:
    store = Store(settings.database_url)
    game_id = store.game_id(settings.game.key)
    assert game_id is not None
    keeper = Keeper(settings, store, game_id)
    keeper.write_archive(folder)
    store.close()
    return keeper


def files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120)


def test_every_version_every_proposal_every_ruling(tmp_path: Path) -> None:
    settings = example_game(tmp_path / "game", "en")
    write(settings, tmp_path / "a")
    winning = toml(tmp_path / "a" / "rules" / "209.toml")
    assert (winning["number"], winning["numbers"]) == (304, [209, 301, 304])
    history = winning["history"]
    assert [h["kind"] for h in history] == ["enacted", "amended", "amendment-enacted"]
    assert [h.get("ordinal") for h in history] == [1, 1, 1]
    assert "100 (positive) points" in history[0]["text"]  # the old text is kept
    assert "25 (positive) points" in history[1]["text"]
    assert history[1]["proposal"] == 301 and history[1]["author"] == "Carla De Santis"
    assert (history[1]["yes"], history[1]["no"]) == (3, 0)
    assert history[1]["message_id"].startswith("<example-en-")
    assert history[1]["parameters"] == {"winning_score": "25"}
    assert history[2]["note"] == "304.1" and "[304.1]" in winning["text"]
    transmuted = toml(tmp_path / "a" / "rules" / "116.toml")
    assert transmuted["history"][-1]["kind"] == "transmuted"
    assert transmuted["history"][-1]["mutable"] is True
    index = toml(tmp_path / "a" / "rules" / "index.toml")
    assert index["in_force"]["304"]["file"] == "rules/209.toml"
    assert index["former_numbers"]["301"] == {"now": 304, "file": "rules/209.toml"}
    failed = toml(tmp_path / "a" / "proposals" / "003xx" / "302.toml")
    assert failed["status"] == "rejected" and (failed["yes"], failed["no"]) == (2, 1)
    assert {v["voter"]: v["vote"] for v in failed["votes"]}["Bob Rossi"] == "no"
    assert failed["points"] == [{"player": "Ada Lovelace", "points": 6, "cause": "award"}]
    amended = toml(tmp_path / "a" / "proposals" / "003xx" / "301.toml")
    assert "-The first player to reach 100 (positive) points wins." in amended["diff"]
    assert "+The first player to reach 25 (positive) points wins." in amended["diff"]
    last = toml(tmp_path / "a" / "proposals" / "003xx" / "307.toml")
    assert {"player": "Bob Rossi", "points": 10, "cause": "dissent-bonus"} in last["points"]
    appeal = toml(tmp_path / "a" / "appeals" / "A1.toml")
    assert appeal["judge"] == "Ada Lovelace" and (appeal["agree"], appeal["disagree"]) == (2, 0)
    assert "retroactive" in appeal["rulings"][0]["text"] and appeal["cites"] == [108]
    cited = toml(tmp_path / "a" / "rules" / "108.toml")
    assert cited["annotations"][0]["appeal"] == "A1"
    scores = toml(tmp_path / "a" / "scores.toml")
    assert scores["scores"]["Bob Rossi"] == 27
    assert [c["cause"] for c in scores["changes"]][-1] == "dissent-bonus"
    short = (tmp_path / "a" / "ruleset.txt").read_text(encoding="utf-8")
    assert "Highest proposal: 307" in short and "Rules in force: 33 (16 immutable" in short
    assert "  304 [M] Winning" in short
    # the mail's own words follow: the last change to the rules, as its subject said it
    assert "Proposal 307 adopted: rule 307 enacted; scores: Bob Rossi +10" in short
    full = (tmp_path / "a" / "ruleset-full.md").read_text(encoding="utf-8")
    assert "Amended(1) by Proposal 301 'The first player to reach 25" in full


def test_a_rebuild_gives_the_same_bytes_and_the_same_commits(tmp_path: Path) -> None:
    settings = example_game(tmp_path / "game", "en")
    keeper = write(settings, tmp_path / "a")
    write(settings, tmp_path / "b")
    assert files(tmp_path / "a") == files(tmp_path / "b")
    rendered = render_archive(keeper.history(), keeper.mail_text)
    assert files(tmp_path / "a") == {path: text.encode() for path, text in rendered.items()}
    status = porcelain.status(str(tmp_path / "a"))
    assert status.unstaged == [] and status.untracked == []  # the index names the last commit
    assert not any(status.staged.values())
    heads = [Repo(str(tmp_path / f)).head() for f in ("a", "b")]
    assert heads[0] == heads[1]
    commits = log(tmp_path / "a")
    assert len(commits) == len(keeper.history().changes)
    adopted = next(c for c in commits if c[2].startswith("Proposal 301 ") and "adopted" in c[2])
    assert adopted[1] == "Carla De Santis <carla@example.org>"
    repo = Repo(str(tmp_path / "a"))
    first = next(
        e.commit
        for e in repo.get_walker()
        if e.commit.message.startswith(b"Proposal 301 'The") and b"adopted" in e.commit.message
    )
    assert b"Message-ID: <example-en-006@example.org>" in first.message
    assert first.commit_time == int((T0 + 7 * DAY + 2 * DAY / 24).timestamp())
    tree = repo[first.tree]
    assert b"rules" in [item.path for item in tree.items()]  # type: ignore[attr-defined]


def test_each_commit_holds_the_archive_as_it_stood_after_its_change(tmp_path: Path) -> None:
    settings = example_game(tmp_path / "game", "en")
    keeper = write(settings, tmp_path / "a")
    history = keeper.history()
    repo = Repo(str(tmp_path / "a"))
    commits = [e.commit for e in repo.get_walker()]
    assert len(commits) == len(history.changes)
    for commit in commits:
        ordinal = int(commit.message.decode().rsplit("Archive-Change: ", 1)[1])
        tree = {
            entry.path.decode(): repo[entry.sha].as_raw_string().decode()
            for entry in repo.object_store.iter_tree_contents(commit.tree)
        }
        assert tree == render_archive(history, keeper.mail_text, ordinal), ordinal
    assert history.changes[2].summary.startswith("Proposal 301 ")
    assert "2026-12-01" in render_archive(history, keeper.mail_text, 1)["ruleset.txt"]


def test_run_keeps_the_archive_and_its_git_history(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    with_game_keys(config, 'archive = "rules-archive"\nsite = "site"')
    settings = load_settings(config)
    store = Store(settings.database_url)
    try:
        Referee.create(store, settings, T0)
        service = Service(settings, store)
        service.run_once(T0)
        (settings.maildir / "new" / "1.mail").write_bytes(
            mail(CARLA, "PROPOSE REPEAL 208", at=T0 + DAY / 24)
        )
        service.run_once(T0 + DAY / 24)
        for who in ("ada@example.org", "bob@example.org", CARLA):
            (settings.maildir / "new" / f"{who}.mail").write_bytes(
                mail(who, "VOTE 301 YES", at=T0 + DAY / 12)
            )
        service.run_once(T0 + DAY / 12)
        service.run_once(T0 + 9 * DAY)
    finally:
        store.close()
    folder = tmp_path / "rules-archive"
    repealed = toml(folder / "rules" / "208.toml")
    assert repealed["in_force"] is False
    assert [h["kind"] for h in repealed["history"]] == ["enacted", "repealed"]
    assert repealed["history"][1]["title"] == "Repeal rule 208"
    done = cli("archive", str(config), str(tmp_path / "elsewhere"))
    assert done.returncode == 0, done.stderr
    # what run built commit by commit equals a rebuild in one go
    assert files(folder) == files(tmp_path / "elsewhere")
    assert Repo(str(folder)).head() == Repo(str(tmp_path / "elsewhere")).head()
    # the site run kept page by page equals one built at once
    built = cli("site", str(config), "--out", str(tmp_path / "site-again"))
    assert built.returncode == 0, built.stderr
    assert files(tmp_path / "site") == files(tmp_path / "site-again")
    assert "Repeal rule 208" in (tmp_path / "site" / "proposals" / "301.html").read_text()


def test_a_new_game_starts_from_an_archive(tmp_path: Path) -> None:
    settings = example_game(tmp_path / "game", "en")
    write(settings, tmp_path / "a")
    ruleset = rulebook.load(str(tmp_path / "a" / "rules"), "en")
    numbers = [r.number for r in ruleset.rules]
    assert 304 in numbers and 209 not in numbers and 301 not in numbers
    winning = next(r for r in ruleset.rules if r.number == 304)
    assert winning.parameters == (("winning_score", "25"),) and "[304.1]" in winning.text
    assert ruleset.name == "Nomic of the King"
    (tmp_path / "new").mkdir()
    config = write_config(tmp_path / "new")
    with_game_keys(config, f'ruleset = "{tmp_path / "a" / "rules"}"')
    done = cli("init", str(config))
    assert done.returncode == 0, done.stderr
    status = cli("status", str(config), "--json")
    assert status.returncode == 0, status.stderr
    assert '"number": 307' in status.stdout


def test_check_accepts_the_archive_and_names_each_fault(tmp_path: Path) -> None:
    settings = example_game(tmp_path / "game", "en")
    write(settings, tmp_path / "a")
    rules = tmp_path / "a" / "rules"
    ok = cli("archive", "check", str(tmp_path / "a"))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    winning = rules / "209.toml"
    text = winning.read_text(encoding="utf-8")
    winning.write_text(
        text.replace("date = 2026-12-08 11:00:00+00:00", "date = 2026-11-08 11:00:00+00:00"),
        encoding="utf-8",
    )
    first = rules / "101.toml"
    first.write_text(
        first.read_text(encoding="utf-8")
        + '\n[[history]]\nkind = "amended"\nnumber = 308\ndate = 2027-02-01T00:00:00Z\n',
        encoding="utf-8",
    )
    gone = rules / "208.toml"
    gone.write_text(
        gone.read_text(encoding="utf-8").replace('kind = "enacted"', 'kind = "amended"', 1)
        + '\n[[history]]\nkind = "repealed"\nnumber = 209\ndate = 2027-02-01T00:00:00Z\n'
        + '\n[[history]]\nkind = "amended"\nnumber = 209\ndate = 2027-02-02T00:00:00Z\n',
        encoding="utf-8",
    )
    params = rules / "210.toml"
    params.write_text(
        params.read_text(encoding="utf-8").replace(
            'max_mutable_rules = "20"', 'max_mutable_rules = "many"'
        ),
        encoding="utf-8",
    )
    bad = cli("archive", "check", str(tmp_path / "a"))
    assert bad.returncode == 1
    out = bad.stdout
    assert "rules/209.toml: history entry 2: dated 2026-11-08" in out
    assert "rules/101.toml: history entry 2: amended: the rule is immutable" in out
    assert "rules/208.toml: history entry 1: the first change must be 'enacted'" in out
    assert "rules/208.toml: history entry 2: number 209 is also used by rules/209.toml" in out
    assert "rules/208.toml: history entry 3: amended after the rule was repealed" in out
    assert "rules/210.toml: parameter max_mutable_rules = many" in out


def test_diff_between_two_dates(tmp_path: Path) -> None:
    settings = example_game(tmp_path / "game", "en")
    config = settings.folder / "game.toml"
    done = cli("archive", "diff", str(config), "--from", "2026-12-02", "--to", "2026-12-31")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "~ Rule 304: renumbered 209 -> 304; parameters winning_score = 25" in out
    assert "-The first player to reach 100 (positive) points wins." in out
    assert "+[304.1] The scores are announced every Sunday." in out
    assert "~ Rule 303: renumbered 116 -> 303; now mutable" in out
    assert "<example-en-006@example.org>" in out
    quiet = cli("archive", "diff", str(config), "--from", "2026-12-02", "--to", "2026-12-03")
    assert "No rule changed." in quiet.stdout
    wrong = cli("archive", "diff", str(config), "--from", "yesterday")
    assert wrong.returncode == 2 and "not an ISO 8601 date" in wrong.stderr


def test_the_italian_archive_speaks_italian(tmp_path: Path) -> None:
    settings = example_game(tmp_path / "game", "it")
    write(settings, tmp_path / "a")
    full = (tmp_path / "a" / "ruleset-full.md").read_text(encoding="utf-8")
    assert "regolamento completo" in full and "Emendata(1) dalla proposta 301" in full
    short = (tmp_path / "a" / "ruleset.txt").read_text(encoding="utf-8")
    assert "Regole in vigore:" in short and "Proposta 307 adottata: regola 307" in short


def test_the_benchmark_history_is_one_the_checker_accepts(tmp_path: Path) -> None:
    from bench.archive_bench import generate, mail_text_for

    history = generate(60, 40, seed=3)
    assert len(history.proposals) == 60 and len(history.changes) == 1 + 3 * 60
    folder = tmp_path / "bench-archive"
    write_files(folder, render_archive(history, mail_text_for(history)))
    assert check_archive(folder) == []
    assert len(list((folder / "proposals").rglob("*.toml"))) == 60


def test_a_code_of_laws_keeps_its_labels_through_the_archive(tmp_path: Path) -> None:
    (tmp_path / "laws.txt").write_text(
        "§ 1. Members pay dues every year.\n§ 2. The board meets every month.\n"
        "§ 2.1. The chair opens the meeting.\n",
        encoding="utf-8",
    )
    config = write_config(tmp_path)
    with_game_keys(config, 'ruleset = "laws.txt"\narchive = "arch"')
    assert cli("init", str(config)).returncode == 0
    done = cli("archive", str(config))
    assert done.returncode == 0, done.stderr
    labels = {toml(p)["label"] for p in (tmp_path / "arch" / "rules").glob("1*.toml")}
    assert labels == {"§ 1", "§ 2", "§ 2.1"}
    again = rulebook.load(str(tmp_path / "arch" / "rules"), "en")
    assert [r.label for r in again.rules] == ["§ 1", "§ 2", "§ 2.1"]
    assert cli("archive", "check", str(tmp_path / "arch")).returncode == 0


def test_bad_archive_and_site_commands_get_one_clear_line(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    assert cli("init", str(config)).returncode == 0
    no_out = cli("site", str(config))
    assert no_out.returncode == 2 and "give --out DIR" in no_out.stderr
    missing = cli("archive", "check", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "not a folder" in missing.stderr
    (tmp_path / "empty").mkdir()
    empty = cli("archive", "check", str(tmp_path / "empty"))
    assert empty.returncode == 1 and "no rule files" in empty.stdout
    broken = tmp_path / "broken" / "rules"
    broken.mkdir(parents=True)
    (broken / "101.toml").write_text("number = [unclosed\n", encoding="utf-8")
    bad = cli("archive", "check", str(tmp_path / "broken"))
    assert bad.returncode == 1 and "rules/101.toml: not valid TOML" in bad.stdout
    assert "Traceback" not in no_out.stderr + missing.stderr + empty.stderr + bad.stderr
