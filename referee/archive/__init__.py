"""The game's public record: rule archive, git history, checks, diffs and website (109, 205, 213).

Everything here is derived from the event log alone (`history`), so the archive and the site
can be rebuilt at any time and a rebuild gives the same bytes. `Keeper` is what `run` and the
CLI use: it feeds the events logged since its last call into the history, writes the archive
files that changed, adds one git commit per new change, and updates the website.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from referee.archive.gitlog import commit_history
from referee.archive.history import History, HistoryBuilder, LoggedEvent
from referee.archive.writer import ArchiveWriter, RulesetText
from referee.config import Settings
from referee.core.model import GameState
from referee.core.printable import printable_data
from referee.mail.render import Renderer

log = logging.getLogger("referee.archive")


def ruleset_mail_text(settings: Settings) -> RulesetText:
    """The text of the ruleset mail (205) as the players got it, subject line first."""
    renderer = Renderer(
        settings.game.language, settings.game.timezone, settings.game.name, settings.game.address
    )
    cache: dict[int, str] = {}

    def text(data: Mapping[str, Any], kind: str) -> str:
        key = id(data)
        if key not in cache:
            rendered = renderer.render(f"notices/{kind}", data)
            cache.clear()
            cache[key] = f"{rendered.subject}\n\n{rendered.text}"
        return cache[key]

    return text


@dataclass
class Written:
    files: int
    commits: int
    pages: int


class EventLog(Protocol):
    """What the archive reads of the store: a game's state before its first event, the events
    logged after a number, and the head of its hash chain (`Store` is one)."""

    def initial(self, game_id: int) -> GameState: ...

    def event_log(
        self, game_id: int, after: int = 0
    ) -> list[tuple[int, datetime, str | None, dict[str, Any]]]: ...

    def chain_head(self, game_id: int) -> tuple[int, str]: ...


class Keeper:
    """Keeps one game's archive and site up to date with its event log."""

    def __init__(self, settings: Settings, store: EventLog, game_id: int) -> None:
        self.settings = settings
        self.store = store
        self.game_id = game_id
        self.builder: HistoryBuilder | None = None
        self.mail_text = ruleset_mail_text(settings)
        self.writers: dict[Path, ArchiveWriter] = {}
        self.site_keys: dict[Path, dict[str, str]] = {}  # the site's page keys, per folder

    def history(self) -> History:
        """The record brought up to date with every event logged so far."""
        if self.builder is None:
            self.builder = HistoryBuilder(self.store.initial(self.game_id))
        rows = self.store.event_log(self.game_id, after=self.builder.seq)
        # The log keeps each text as written (107); the record shows its controls (printable).
        self.builder.feed(
            LoggedEvent(seq, at, printable_data(mid), printable_data(payload))
            for seq, at, mid, payload in rows
        )
        self.builder.history.chain = self.store.chain_head(self.game_id)  # 213: the record
        return self.builder.history

    def write_archive(self, folder: Path, git: bool = True, progress: bool = False) -> Written:
        history = self.history()
        writer = self.writers.setdefault(folder, ArchiveWriter(folder, self.mail_text))
        changed = writer.write(history)
        commits = 0
        if git:
            address = self.settings.game.address
            commits = commit_history(folder, history, self.mail_text, address, progress)
        return Written(len(changed), commits, 0)

    def write_site(self, folder: Path, progress: bool = False) -> int:
        from referee.archive.site import build_site

        built = build_site(
            self.history(),
            folder,
            progress,
            self.site_keys.get(folder),
            self.settings.game.timezone,
        )
        self.site_keys[folder] = built.keys
        return built.written

    def update(self) -> Written:
        """What `run` calls after each batch: the configured archive and site, if any."""
        written = Written(0, 0, 0)
        if self.settings.game.archive is not None:
            written = self.write_archive(self.settings.game.archive)
        if self.settings.game.site is not None:
            written.pages = self.write_site(self.settings.game.site)
        return written


__all__ = ["History", "Keeper", "Written", "ruleset_mail_text"]
