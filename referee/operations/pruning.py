"""`nomic-referee prune CONFIG`: delete what `[retention]` says is old enough (issue 29, item 9).

A game runs for years; its Processed folder and its backups grow without end. `prune` deletes
mail in the Processed folder delivered more than `processed_days` ago (the local Maildir's
`.Processed`, or the IMAP server's Processed folder) and, in `backups_folder`, every backup
but the newest `backups`. What proves the game stays: every applied mail is in the database's
chain, and `export-mail` writes it out again. Quarantined mail is never pruned (an operator
must look at it), nor the inbox, nor a file in the backups folder that is no SQLite database.
`--dry-run` lists what would go and deletes nothing.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from referee.config import ImapConfig, Settings
from referee.mail.imap import ImapInbox, _check
from referee.mail.maildir import delivered

SQLITE_HEADER = b"SQLite format 3\x00"
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True)
class Pruned:
    """What `prune` deleted (or, with --dry-run, would delete)."""

    processed: int  # mail deleted from the Processed folder
    backups: tuple[Path, ...]  # backup files deleted, oldest first
    where: str  # the Processed folder, as the operator knows it


def prune(settings: Settings, now: datetime, dry_run: bool = False) -> Pruned:
    """Apply the game's [retention] at `now`."""
    retention = settings.retention
    processed, where = 0, ""
    if retention.processed_days:
        before = now - timedelta(days=retention.processed_days)
        if settings.imap is not None:
            where = f"IMAP {settings.imap.processed}"
            processed = asyncio.run(prune_imap(settings.imap, before, dry_run))
        else:
            folder = settings.maildir / ".Processed"  # the Maildir inbox's (maildir.py)
            where = str(folder)
            processed = len(_remove(old_mail(folder, before), dry_run))
    backups: tuple[Path, ...] = ()
    if retention.backups_folder is not None:
        backups = tuple(_remove(old_backups(retention.backups_folder, retention.backups), dry_run))
    return Pruned(processed, backups, where)


def old_mail(folder: Path, before: datetime) -> list[Path]:
    """The mail of a Maildir folder delivered before `before` (the time in its name)."""
    found = []
    for sub in ("cur", "new"):
        try:
            entries = list(os.scandir(folder / sub))
        except FileNotFoundError:
            continue
        for entry in entries:
            if not entry.is_file(follow_symlinks=False) or entry.name.startswith("."):
                continue
            if delivered(entry.name, entry.stat().st_mtime) < before:
                found.append(Path(entry.path))
    return sorted(found)


def old_backups(folder: Path, keep: int) -> list[Path]:
    """The SQLite files of `folder` but the newest `keep` (by modification time), oldest first."""
    if not folder.is_dir():
        return []
    backups = []
    for path in folder.iterdir():
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as handle:
                if handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER:
                    backups.append((path.stat().st_mtime, path.name, path))
    backups.sort()
    return [path for _, _, path in backups[: max(0, len(backups) - keep)]]


def _remove(paths: list[Path], dry_run: bool) -> list[Path]:
    for path in paths if not dry_run else ():
        path.unlink(missing_ok=True)
    return paths


def imap_date(moment: datetime) -> str:
    """A day as IMAP's SEARCH writes it (RFC 3501 date: 1-Dec-2026), in any locale."""
    return f"{moment.day}-{_MONTHS[moment.month - 1]}-{moment.year}"


async def prune_imap(config: ImapConfig, before: datetime, dry_run: bool) -> int:
    """Delete the mail of the IMAP Processed folder that arrived before the day of `before`
    (SEARCH BEFORE compares INTERNALDATE's day); returns how many."""
    inbox = ImapInbox(dataclasses.replace(config, folder=config.processed))
    await inbox.connect(create_folders=False)
    try:
        assert inbox.client is not None
        found = await inbox.client.uid_search(f"BEFORE {imap_date(before)}", charset=None)
        uids = []
        for line in _check(found, "UID SEARCH").lines:  # the numbers' line, then "completed"
            parts = bytes(line).decode(errors="replace").split()
            uids += parts if parts and all(part.isdigit() for part in parts) else []
        if uids and not dry_run:
            marked = await inbox.client.uid("store", ",".join(uids), "+FLAGS", r"(\Deleted)")
            _check(marked, "UID STORE")
            _check(await inbox.client.expunge(), "EXPUNGE")
        return len(uids)
    finally:
        await inbox.close()
