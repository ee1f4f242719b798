"""`nomic-referee replay`: archived mail through a fresh game, to prove a result (213).

`read_record` decides what mail is replayed: a `--out` file that is not an mbox is never
overwritten, and with `strict` a message without a delivery time is refused (never its
sender's Date). `replay_record` runs the replay and returns a `ReplayReport`: the state in
the JSON of `status` with the chain's last link, and what the command says on stderr (the
mail read and written, the website, the messages that had no delivery time, the mail
withheld, a stand-in the replay cannot follow, the messages that could not be processed).
A refusal is `ReplayRefused`, whose message is the one line the command prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from referee.config import Settings
from referee.core import view
from referee.counts import counted
from referee.replay import Archived, ReplayResult, read_mail, replay, undated


class ReplayRefused(ValueError):
    """The mail or the output given cannot be used as asked."""


def replaceable(path: Path) -> bool:
    """An export overwrites an earlier export (an mbox, or empty), never another file."""
    if not path.is_file():
        return False
    with path.open("rb") as handle:
        return handle.read(5) in (b"", b"From ")


def read_record(mbox: Path, out: Path | None, strict: bool) -> list[Archived]:
    """The messages of `mbox` to replay, once `out` is known to be safe to write."""
    if out is not None and out.exists() and not replaceable(out):
        raise ReplayRefused(f"--out: {out} exists and is not an mbox; choose another file")
    messages = read_mail(mbox)
    missing = undated(messages)
    if missing and strict:
        raise ReplayRefused(
            f"{missing} of {counted(len(messages), 'message')} in {mbox} have no delivery time "
            "(no date in their 'From ' line); --strict takes no sender's Date"
        )
    return messages


@dataclass(frozen=True)
class ReplayReport:
    """The replayed game, and what its replay wrote and could not check."""

    state: dict[str, Any]  # `status --json`'s state, with the chain's last link and head
    result: ReplayResult
    mbox: Path
    out: Path | None
    site: Path | None

    def notes(self) -> list[str]:
        """What the command says on stderr, after the state."""
        result, out, site = self.result, self.out, self.site
        lines = [
            f"{counted(result.messages, 'message')} read from {self.mbox}"
            + (f"; {counted(result.sent, 'mail')} written to {out}" if out is not None else "")
        ]
        if site is not None:
            lines.append(
                f"{counted(result.pages, 'file')} of the website written in {site}; "
                f"open {site / 'index.html'}"
            )
        if result.undated:
            lines.append(
                f"warning: {counted(result.undated, 'message')} had no delivery time (no date "
                "in the 'From ' line): the Date header its sender wrote was used; --strict "
                "refuses them"
            )
        if result.withheld:
            lines.append(
                f"{counted(result.withheld, 'mail')} withheld from the record (people not "
                "playing): each stand-in made its link of the chain; what they said cannot be "
                "checked"
            )
        if result.unfollowed:
            lines.append(
                f"warning: the withheld mail of link {result.unfollowed[0]} changed the game (a "
                "confirmed request to join not admitted): the replay cannot follow it"
            )
        if result.failed:
            lines.append(f"{counted(len(result.failed), 'message')} could not be processed")
        return lines


def replay_record(
    settings: Settings,
    mbox: Path,
    messages: list[Archived],
    until: datetime | None,
    out: Path | None = None,
    site: Path | None = None,
) -> ReplayReport:
    """A fresh game from `settings` fed `messages` (read from `mbox`) up to `until`; with
    `out` every mail it sends is written there, with `site` its website."""
    result = replay(settings, messages, until, out, site, progress=True)
    state = view.public_state(result.state, result.now)
    state["chain"] = {"link": result.link, "head": result.head}  # to compare with the mail's
    return ReplayReport(state, result, mbox, out, site)
