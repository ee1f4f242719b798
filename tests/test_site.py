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
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from examples.site_screenshots import FLAGS
from referee.archive import Keeper
from referee.config import Settings, load_settings
from referee.service import Referee
from referee.store.store import Store
from tests.archive_games import example_game, probe_game
from tests.conftest import write_config
from tests.helpers import DAY, T0, mail

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


# --- where the game stands (issue 14, part 5) ----------------------------------------------


def test_the_index_says_the_game_is_over_and_who_won(
    browser: Browser, sites: dict[str, Path]
) -> None:
    """209: the replayed example's site opens with its end, the winner and the King; every
    renumbered rule shows its former numbers (109); times are the game's (Europe/Rome)."""
    page = browser.new_page(viewport={"width": 412, "height": 860})
    for language, over, won, formerly in (
        ("en", "The game is over.", "Bob Rossi won with 27 points.", "(formerly 209, 301)"),
        ("it", "La partita è finita.", "Ha vinto Bob Rossi con 27 punti.", "(già 209, 301)"),
    ):
        page.goto((sites[language] / "index.html").as_uri())
        standing = page.inner_text(".standing")
        assert standing.startswith(over) and won in standing
        assert "Ada Lovelace" in standing and "CET" in standing and "UTC" not in standing
        row = page.locator("table.rules tr", has=page.locator("a", has_text="304"))
        assert formerly in row.inner_text()
        # the index fits a phone: nothing is wider than the screen
        assert page.evaluate("document.documentElement.scrollWidth") <= 412
    page.close()


def test_titles_and_search_snippets_are_cut_between_words(
    browser: Browser, sites: dict[str, Path]
) -> None:
    """An untitled rule (the Italian ruleset's) is shown by its text cut between two words, and
    a search snippet starts and ends on whole words."""
    page = browser.new_page()
    page.goto((sites["it"] / "search.html").as_uri() + "?q=giocatori")
    page.wait_for_selector("#results li")
    index = {r["n"]: r["x"] for r in page.evaluate("window.NOMIC_INDEX")}
    snippets = page.locator("#results li p").all_inner_texts()
    assert snippets
    for shown in snippets:
        core = shown.removeprefix("…").removesuffix("…")
        text = next(x for x in index.values() if core in x)
        at = text.index(core)
        assert at == 0 or text[at - 1] == " ", shown  # starts on a word
        end = at + len(core)
        assert end == len(text) or text[end] == " ", shown  # ends on a word
        assert shown.startswith("…") == (at > 0) and shown.endswith("…") == (end < len(text))
    page.goto((sites["it"] / "index.html").as_uri())
    rows = page.eval_on_selector_all(
        "table.rules tr",
        "rows => rows.map(r => [r.cells[0].innerText, r.cells[1].innerText])",
    )
    cut = [(int(n), t.split(" (già")[0]) for n, t in rows if "…" in t]
    assert cut  # the Italian rules have no titles: their texts are shortened
    for number, shown in cut:
        head = shown.removesuffix("…")
        text = " ".join(index[number].split())
        assert text.startswith(head) and text[len(head)] in " .,;:", shown
    page.close()


def test_the_index_and_the_proposal_say_the_vote_is_open_after_the_debate(
    browser: Browser, tmp_path: Path
) -> None:
    """112, 203: once the debate is over the proposal is "voting", not "in debate"; the index
    says whose turn it is, the phase and when the vote closes, in the game's time zone."""
    (tmp_path / "game").mkdir()
    settings = load_settings(write_config(tmp_path / "game"))
    store = Store(settings.database_url)
    try:
        referee = Referee.create(store, settings, T0, render=False)
        first = referee.state.turn_player
        assert first is not None
        at = T0 + DAY / 24
        referee.receive(mail(first, "PROPOSE ENACT\nEvery Friday is a holiday.\nEND", at=at), at)
        referee.receive(mail("ada@example.org", "VOTE 301 YES", at=at), at + DAY / 24)
        referee.advance(T0 + 8 * DAY)  # the debate (7 days) is over; two votes are missing
        assert referee.state.phase.value == "voting"
        closes = referee.state.current.vote_deadline if referee.state.current else None
        player = referee.state.player(first)
        assert closes is not None and player is not None
        Keeper(settings, store, referee.game_id).write_site(tmp_path / "site")
    finally:
        store.close()
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto((tmp_path / "site" / "index.html").as_uri())
    standing = page.inner_text(".standing")
    local = closes.astimezone(ZoneInfo(settings.game.timezone))
    assert player.name in standing and "vote on proposal 301" in standing
    assert f"{local:%Y-%m-%d %H:%M} {local.tzname()}" in standing
    assert "over" not in standing
    page.goto((tmp_path / "site" / "proposals.html").as_uri())
    assert page.inner_text("td.st") == "voting"
    page.goto((tmp_path / "site" / "proposals" / "301.html").as_uri())
    assert page.inner_text(".meta .st") == "voting"
    page.close()
