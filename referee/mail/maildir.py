"""The embedded inbox: a Maildir folder, as Postfix and Dovecot deliver to (rules 107, 203).

A message is moved to the `.Processed` folder only after its database commit, and to
`.Quarantine` when processing fails, by an atomic rename within the Maildir. It is never
deleted. Subfolders follow the Maildir++ layout, so Dovecot and mail clients see them.
"""

from __future__ import annotations

import logging
import mailbox
import os
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger("referee.maildir")

Handler = Callable[[bytes], None]  # raises when the message could not be processed


class MaildirInbox:
    def __init__(self, path: Path, processed: str = "Processed", quarantine: str = "Quarantine"):
        self.path = path
        for sub in ("new", "cur", "tmp"):  # also when an MTA made only part of it
            (path / sub).mkdir(parents=True, exist_ok=True)
        box = mailbox.Maildir(str(path), create=True)
        self.processed = self._folder(box, processed)
        self.quarantine = self._folder(box, quarantine)

    @staticmethod
    def _folder(box: mailbox.Maildir, name: str) -> Path:
        if name not in box.list_folders():
            box.add_folder(name)
        return Path(box._path) / f".{name}"  # Maildir++: the folder ".Name" beside new/ cur/

    def waiting(self) -> list[Path]:
        """Messages in the inbox, in delivery order (Maildir names start with the time)."""
        found: list[Path] = []
        for sub in ("new", "cur"):
            folder = self.path / sub
            with os.scandir(folder) as entries:
                found += [
                    Path(e.path) for e in entries if e.is_file() and not e.name.startswith(".")
                ]
        return sorted(found, key=lambda p: (p.stat().st_mtime, p.name))

    def drain(self, handle: Handler, on_failure: Callable[[bytes, Exception], None]) -> int:
        """Process every waiting message; returns how many were processed."""
        done = 0
        for path in self.waiting():
            try:
                raw = path.read_bytes()
            except FileNotFoundError:  # taken by another process
                continue
            try:
                handle(raw)
            except Exception as exc:  # never lose it: set it aside and say why
                log.exception("message %s failed; moved to quarantine", path.name)
                on_failure(raw, exc)
                self._move(path, self.quarantine)
                continue
            self._move(path, self.processed)
            done += 1
        return done

    @staticmethod
    def _move(path: Path, folder: Path) -> None:
        name = path.name if ":2," in path.name else path.name + ":2,S"
        os.replace(path, folder / "cur" / name)
