"""Files and folders only the referee's own user may read, whatever the umask (issue 29).

What the referee writes holds players' mail and what unlocks the game: the SQLite database and
its backups, the Maildir folders it makes and the mail it writes in them, the DKIM key, the
OAuth token. Each is made here, mode 0600 (files) or 0700 (folders), set by chmod after it is
made, since a umask only takes bits away and an operator's umask of 000 would leave them open.
Folders that exist already keep their mode: they are the operator's.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO

from sqlalchemy.engine import make_url

FILE_MODE = 0o600
FOLDER_MODE = 0o700


def private_folder(path: Path) -> Path:
    """The folder at `path`, made with every missing parent at mode 0700."""
    missing: list[Path] = []
    for folder in (path, *path.parents):
        if folder.exists():
            break
        missing.append(folder)
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=FOLDER_MODE)
        except FileExistsError:  # another process made it meanwhile: it made it 0700 too
            continue
        folder.chmod(FOLDER_MODE)
    if not path.is_dir():
        raise NotADirectoryError(f"{path} is not a folder")
    return path


def create_private(path: Path) -> BinaryIO:
    """A new file at `path`, open for writing, mode 0600 (never over an existing file)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    try:
        os.fchmod(descriptor, FILE_MODE)
        return os.fdopen(descriptor, "wb")
    except BaseException:
        os.close(descriptor)
        raise


def private_database(url: str) -> None:
    """Make the SQLite file of `url` empty at mode 0600 before SQLite first opens it (SQLite
    gives its -wal and -shm files the database's own mode); PostgreSQL keeps its own files."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return
    path = Path(str(parsed.database))
    if path.exists():
        return
    private_folder(path.parent)
    try:
        create_private(path).close()
    except FileExistsError:  # made meanwhile by another process
        return


def open_to_others(paths: list[Path]) -> list[tuple[Path, int]]:
    """Of `paths` that exist, those other local users may read or enter (the mode's last
    digit), with their modes: for `doctor`, which names the chmod that closes each."""
    found = []
    for path in paths:
        try:
            mode = path.stat().st_mode & 0o777
        except OSError:
            continue
        if mode & 0o007:
            found.append((path, mode))
    return found
