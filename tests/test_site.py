"""The game's website, built by `nomic-referee site` and driven in Debian's Chromium (issue 9).

Every page of the replayed example games loads without a console error, every link resolves,
the search finds a rule by a word of its text, the version picker diffs two versions, an XSS
probe in a proposal stays inert, and an update rewrites only what changed.
"""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from examples.site_screenshots import FLAGS
from referee.archive import Keeper
from referee.config import Settings
from referee.service import Referee
from referee.store.store import Store
from tests.archive_games import example_game, probe_game
from tests.helpers import DAY, mail

CLI = [sys.executable, "-c", "from referee.cli import main; main()"]
CHROMIUM = Path("/usr/bin/chromium")


def build(settings: Settings, out: Path) -> str:
    done = subprocess.run(
        [*CLI, "site", str(settings.folder / "game.toml"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("sites")
    out: dict[str, Path] = {}
    for language in ("en", "it"):
        settings = example_game(root / f"game-{language}", language)
        build(settings, root / f"site-{language}")
        out[language] = root / f"site-{language}"
    probe = probe_game(root / "probe")
    build(probe, root / "site-probe")
    out["probe"] = root / "site-probe"
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail("Debian's chromium is needed (apt-get install chromium; tests/run.sh does)")
    with sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        yield chromium
        chromium.close()


def crawl(browser: Browser, site: Path) -> tuple[set[Path], list[str], list[str]]:
    """Visit every page reachable from index.html and every .html file; report problems."""
    page = browser.new_page()
    errors: list[str] = []
    page.on(
        "console", lambda m: errors.append(f"{page.url}: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda e: errors.append(f"{page.url}: {e}"))
    page.on("dialog", lambda d: errors.append(f"{page.url}: a dialog opened: {d.message}"))
    todo = [site / "index.html", *sorted(site.rglob("*.html"))]
    seen: set[Path] = set()
    broken: list[str] = []
    while todo:
        path = todo.pop(0)
        if path in seen:
            continue
        seen.add(path)
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)"):
            parsed = urlparse(href)
            if parsed.scheme != "file":
                broken.append(f"{path.name}: {href} leaves the site")
                continue
            target = Path(unquote(parsed.path))
            if not target.is_file():
                broken.append(f"{path.relative_to(site)}: {href}")
            elif target.suffix == ".html":
                todo.append(target)
        for src in page.eval_on_selector_all("[src]", "els => els.map(e => e.src)"):
            if not Path(unquote(urlparse(src).path)).is_file():
                broken.append(f"{path.relative_to(site)}: {src}")
    page.close()
    return seen, errors, broken


@pytest.mark.parametrize("language", ["en", "it"])
def test_every_page_loads_cleanly_and_every_link_resolves(
    browser: Browser, sites: dict[str, Path], language: str
) -> None:
    site = sites[language]
    seen, errors, broken = crawl(browser, site)
    assert errors == []
    assert broken == []
    assert seen >= set(site.rglob("*.html"))
    assert len(seen) == 47  # 6 lists, 33 rules, 7 proposals, 1 appeal
    feed = ET.parse(site / "feed.xml").getroot()
    entries = feed.findall("{http://www.w3.org/2005/Atom}entry")
    assert entries and "307" in (entries[0].findtext("{http://www.w3.org/2005/Atom}title") or "")
    index = (site / "index.html").read_text(encoding="utf-8")
    assert f'<html lang="{language}">' in index
    assert ("Regolamento" if language == "it" else "Ruleset") in index


def search(page: Page, site: Path, word: str) -> list[str]:
    page.goto((site / "search.html").as_uri() + f"?q={word}")
    page.wait_for_selector("#results li, #no-results:not([hidden])")
    return page.locator("#results li a").all_text_contents()


def test_search_finds_a_rule_by_a_word_of_its_text(
    browser: Browser, sites: dict[str, Path]
) -> None:
    page = browser.new_page()
    assert search(page, sites["en"], "pigeon") == [
        "Rule 307"  # enacted without a title: its number alone, not its text again
    ]
    found = search(page, sites["it"], "piccione")
    assert len(found) == 1 and found[0].startswith("Regola 307")
    assert search(page, sites["en"], "zebra") == []
    assert page.is_visible("#no-results")
    page.fill("#q", "retroactive")  # typing searches as you go
    page.wait_for_selector("#results li")
    assert any(
        "108" in t
        for t in page.eval_on_selector_all("#results li a", "e => e.map(x => x.textContent)")
    )
    page.close()


def test_any_two_versions_of_a_rule_can_be_compared(
    browser: Browser, sites: dict[str, Path]
) -> None:
    page = browser.new_page()
    page.goto((sites["en"] / "rules" / "209.html").as_uri())
    assert page.inner_text("h1") == "Rule 304 — Winning"
    page.select_option("#diff-from", "0")
    page.select_option("#diff-to", "2")
    assert page.inner_text("#diff-out del") == "100"
    assert "25" in page.locator("#diff-out ins").all_inner_texts()
    page.close()


def test_an_xss_probe_in_a_proposal_stays_inert(browser: Browser, sites: dict[str, Path]) -> None:
    site = sites["probe"]
    page = browser.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: dialogs.append(d.message))
    for path in ("proposals/301.html", "rules/301.html", "rules.html", "index.html"):
        page.goto((site / path).as_uri())
        page.wait_for_load_state("load")
        assert page.evaluate("window.__xss") is None
        assert page.locator("[onerror]").count() == 0
        assert page.locator("main img").count() == 0  # no image from a player's text
        assert page.locator("a[href^='javascript']").count() == 0
        assert page.locator("script:not([src])").count() <= 1  # only the versions' JSON
    page.goto((site / "proposals" / "301.html").as_uri())
    assert "anything" in page.inner_text(".text")
    assert search(page, site, "anything")  # the probe's rule is found, not run
    assert page.evaluate("window.__xss") is None
    assert dialogs == []
    page.close()


def test_an_update_rewrites_only_what_changed(tmp_path: Path) -> None:
    settings = probe_game(tmp_path / "game")
    store = Store(settings.database_url)
    try:
        referee = Referee.open(store, settings)
        at = referee.state.started_at + 9 * DAY + DAY / 24
        referee.receive(mail("ada@example.org", "AWARD 5", at=at), at)
    finally:
        store.close()
    first = build(settings, tmp_path / "site")
    assert "files written" in first
    again = build(settings, tmp_path / "site")
    assert again.startswith("0 files written")
    store = Store(settings.database_url)
    try:
        referee = Referee.open(store, settings)
        sender = referee.state.turn_player
        assert sender is not None
        at = referee.state.started_at + 10 * DAY
        referee.receive(mail(sender, "PROPOSE ENACT\nEvery Friday is a holiday.\nEND", at=at), at)
        for who in ("ada@example.org", "bob@example.org", "carla@example.org"):
            at += DAY / 24
            referee.receive(mail(who, "VOTE 302 YES", at=at), at)
        referee.advance(at + 8 * DAY)
        assert referee.state.rule_by_number(302) is not None  # adopted
        keeper = Keeper(settings, store, referee.game_id)
        before = {p: p.stat().st_mtime_ns for p in (tmp_path / "site").rglob("*") if p.is_file()}
        written = keeper.write_site(tmp_path / "site")
    finally:
        store.close()
    changed = sorted(
        str(p.relative_to(tmp_path / "site"))
        for p in (tmp_path / "site").rglob("*")
        if p.is_file() and before.get(p) != p.stat().st_mtime_ns
    )
    assert "proposals/302.html" in changed and "proposals.html" in changed
    assert [c for c in changed if c.startswith("rules/")] == ["rules/302.html"]
    assert written == len([c for c in changed if c != ".manifest.json"]) < 14
