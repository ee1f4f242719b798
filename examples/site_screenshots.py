"""Screenshots of the example games' website for the README (issue 9).

Replays examples/game-en.mbox and game-it.mbox into throw-away databases, builds each game's
site with `nomic-referee site`, and photographs the main pages with Debian's headless Chromium:

    python -m examples.site_screenshots [--out docs] [--keep SITE_FOLDER]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from referee.config import load_settings
from referee.replay import read_mbox
from referee.service import Referee
from referee.store.store import Store

HERE = Path(__file__).resolve().parent
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SHOTS = {
    "en": [("index.html", "site-ruleset-en.png"), ("rules/209.html", "site-rule-en.png")],
    "it": [("proposals/302.html", "site-proposal-it.png"), ("scores.html", "site-scores-it.png")],
}


def example_site(language: str, work: Path) -> Path:
    config = work / f"game-{language}.toml"
    text = (HERE / f"game-{language}.toml").read_text(encoding="utf-8")
    config.write_text(text + f'\n[database]\nurl = "sqlite:///{language}.db"\n', encoding="utf-8")
    settings = load_settings(config)
    store = Store(settings.database_url)
    try:
        messages = read_mbox(HERE / f"game-{language}.mbox")
        start = settings.game.start or messages[0].at
        assert start is not None
        referee = Referee.create(store, settings, start, render=False)
        for item in messages:
            referee.receive(item.raw, item.at or start)
        referee.advance(messages[-1].at or start)
    finally:
        store.close()
    out = work / f"site-{language}"
    cli = [sys.executable, "-c", "from referee.cli import main; main()"]
    subprocess.run([*cli, "site", str(config), "--out", str(out)], check=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=HERE.parent / "docs")
    parser.add_argument("--keep", type=Path, help="copy the built sites here")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
        for language, shots in SHOTS.items():
            site = example_site(language, Path(tmp))
            if args.keep:
                shutil.copytree(site, args.keep / site.name, dirs_exist_ok=True)
            page = browser.new_page(viewport={"width": 1100, "height": 860})
            for path, name in shots:
                page.goto((site / path).as_uri())
                page.screenshot(path=str(args.out / name), full_page=False)
                print(args.out / name)
            page.close()
        browser.close()


if __name__ == "__main__":
    main()
