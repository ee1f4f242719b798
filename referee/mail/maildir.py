"""The embedded inbox: a Maildir folder, as Postfix and Dovecot deliver to (rules 107, 203, 212).

A message is moved to the `.Processed` folder only after its database commit, and to
`.Quarantine` when processing fails, by an atomic rename within the Maildir. It is never
deleted. Subfolders follow the Maildir++ layout, so Dovecot and mail clients see them.

Messages are handed over in delivery order with their delivery time (the time in the unique
name the MTA gave them, else the file's mtime): the referee applies each at that time, so a
vote delivered before a deadline counts even when it is read after it (203, 213).

Nothing stops the intake: an entry that is no readable file (a directory, a dangling link, a
file that cannot be opened) is set aside in `.Quarantine` with a log line; a message larger
than the game's limit is read only up to its headers. Two processes may look at one Maildir:
a message another process moved away first is simply skipped. Mail taken over LMTP that
fails is written straight into `.Quarantine` (`keep`) before the MTA is answered.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from referee.mail.intake import HEAD_BYTES
from referee.private import create_private, private_folder

log = logging.getLogger("referee.maildir")
_kept = itertools.count(1)

# Applies one message (raw bytes, or only its head when it is too large; its real size; when it
# was delivered). Returns why it must be set aside, or None once it is committed; raises to stop
# the intake with the message left where it is.
Handler = Callable[[bytes, int, datetime], Exception | None]
Failure = Callable[[bytes, Exception, str], None]  # raw (maybe empty), why, where it was


def make_maildir(path: Path) -> Path:
    """The Maildir at `path` with its new/, cur/ and tmp/, each folder made at mode 0700."""
    for sub in ("new", "cur", "tmp"):
        private_folder(path / sub)
    return path


def deliver(folder: Path, raw: bytes, where: str, into: str = "new") -> Path:
    """Write one mail into the Maildir `folder` as an MTA delivers (tmp/, fsync, rename into
    `into`), mode 0600: "new" for mail not yet seen, "cur" for mail filed away."""
    name = f"{int(time.time())}.M{time.time_ns() % 10**9}P{os.getpid()}Q{next(_kept)}.{where}"
    tmp = folder / "tmp" / name
    with create_private(tmp) as file:
        file.write(raw)
        file.flush()
        os.fsync(file.fileno())
    final = folder / into / (f"{name}:2," if into == "cur" else name)
    os.replace(tmp, final)
    return final


class MaildirInbox:
    def __init__(
        self,
        path: Path,
        processed: str = "Processed",
        quarantine: str = "Quarantine",
        max_bytes: int | None = None,
    ):
        self.path = path
        self.max_bytes = max_bytes
        make_maildir(path)  # also when an MTA made only part of it
        self.processed = self._folder(path, processed)
        self.quarantine = self._folder(path, quarantine)
        self.stuck: set[str] = set()  # entries that could be neither read nor set aside

    @staticmethod
    def _folder(path: Path, name: str) -> Path:
        folder = make_maildir(path / f".{name}")  # Maildir++: the folder ".Name" beside new/
        with contextlib.suppress(FileExistsError):  # marks a Maildir++ folder (Dovecot, mutt)
            create_private(folder / "maildirfolder").close()
        return folder

    def waiting(self) -> list[tuple[Path, int, datetime]]:
        """Entries in the inbox with their sizes and delivery times, in delivery order; an
        entry that is no regular file has size -1."""
        found: list[tuple[datetime, float, str, Path, int]] = []
        for sub in ("new", "cur"):
            with os.scandir(self.path / sub) as entries:
                for entry in entries:
                    if entry.name.startswith(".") or entry.path in self.stuck:
                        continue
                    try:
                        info = entry.stat()  # follows a link
                        regular = entry.is_file()
                    except FileNotFoundError:
                        if not os.path.lexists(entry.path):
                            continue  # taken by another process meanwhile
                        info, regular = entry.stat(follow_symlinks=False), False  # dangling link
                    except OSError:
                        info, regular = entry.stat(follow_symlinks=False), False
                    size = info.st_size if regular else -1
                    at = delivered(entry.name, info.st_mtime)
                    found.append((at, info.st_mtime, entry.name, Path(entry.path), size))
        return [(path, size, at) for at, _, _, path, size in sorted(found)]

    def read(self, path: Path, size: int) -> bytes:
        """The message, or only its head when it is larger than the limit."""
        if self.max_bytes is not None and size > self.max_bytes:
            with path.open("rb") as file:
                return file.read(HEAD_BYTES)
        return path.read_bytes()

    def drain(
        self, handle: Handler, on_failure: Failure, halt: threading.Event | None = None
    ) -> int:
        """Process every waiting message; returns how many were processed."""
        done = 0
        for path, size, at in self.waiting():
            if halt is not None and halt.is_set():
                break
            where = f"maildir {path.parent.name}/{path.name}"
            try:
                if size < 0:
                    raise IsADirectoryError(f"{path.name} is not a regular file")
                raw = self.read(path, size)
            except FileNotFoundError:  # taken by another process
                continue
            except OSError as exc:  # unreadable: set it aside, never stop the intake
                on_failure(b"", exc, where)
                self._move(path, self.quarantine)
                continue
            problem = handle(raw, size, at)
            if problem is not None:  # never lose it: set it aside and say why
                on_failure(raw, problem, where)
                self._move(path, self.quarantine)
                continue
            self._move(path, self.processed)
            done += 1
        return done

    def keep(self, raw: bytes, where: str = "lmtp") -> Path:
        """Write a mail that came by another way (LMTP) into the quarantine folder, as an MTA
        delivers (tmp/, fsync, rename into cur/): kept there before it is acknowledged."""
        return deliver(self.quarantine, raw, where, "cur")

    def _move(self, path: Path, folder: Path) -> None:
        name = path.name if ":2," in path.name else path.name + ":2,S"
        try:
            os.replace(path, folder / "cur" / name)
        except FileNotFoundError:  # another process moved it first: it is done there
            log.info("message %s was moved by another process", path.name)
        except OSError:
            log.exception("cannot move %s to %s; it is left where it is", path.name, folder.name)
            self.stuck.add(str(path))


def delivered(name: str, mtime: float) -> datetime:
    """When a message was delivered: the time its unique name starts with, as Postfix, Dovecot
    and `mailbox` write it (seconds since 1970), else the file's modification time."""
    stamp = name.partition(".")[0]
    seconds = int(stamp) if stamp.isdigit() and len(stamp) == 10 else mtime
    return datetime.fromtimestamp(seconds, UTC)
