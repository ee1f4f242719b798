"""Playing a game on an imported ruleset, for the import tests (101, 107, 109, 205).

A config that points `[game] ruleset` at an imported folder, the mails of a turn, and
`replay_game`, which writes the mails into an mbox, replays it through the CLI (`nomic-referee
replay --json --out`) as an operator would, and gives back the game's state and what the referee
sent. The ruleset mail's order is checked against the document's by `ruleset_order`.
"""

from __future__ import annotations

import email.utils
import json
import mailbox
import re
from collections.abc import Sequence
from datetime import timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Any

from examples.make_examples import CONFIG as EXAMPLE_CONFIG
from tests.helpers import ADA, BOB, CARLA, T0
from tests.test_cli import cli


def config(folder: Path, ruleset: Path, parameters: str = "", language: str | None = "en") -> Path:
    """A game config beside `folder` playing `ruleset`; `language=None` leaves [game] language
    out, so the game speaks its ruleset's."""
    text = EXAMPLE_CONFIG.format(name="Club", language=language or "en").replace(
        'timezone = "Europe/Rome"', f'timezone = "Europe/Rome"\nruleset = "{ruleset}"'
    )
    if language is None:
        text = re.sub(r'(?m)^language = "en".*\n', "", text, count=1)
    text += '\n[database]\nurl = "sqlite:///club.db"\n'
    if parameters:
        text += f"\n[parameters]\n{parameters}\n"
    path = folder / "game.toml"
    path.write_text(text, encoding="utf-8")
    return path


def message(sender: str, body: str, at_hours: float, subject: str = "move") -> EmailMessage:
    mail = EmailMessage()
    mail["From"] = sender
    mail["To"] = "referee@nomic.example"
    mail["Subject"] = subject
    mail["Date"] = format_datetime(T0 + timedelta(hours=at_hours))
    mail["Message-ID"] = f"<import-{at_hours}-{sender}@example.org>"
    mail.set_content(body)
    return mail


def turn(proposer: str, command: str, number: int, day: int) -> list[EmailMessage]:
    """A proposal, everyone's YES, and the King's points when the vote has closed."""
    hours = day * 24
    return [
        message(proposer, command, hours + 1),
        message(ADA, f"VOTE {number} YES", hours + 2),
        message(BOB, f"VOTE {number} YES", hours + 3),
        message(CARLA, f"VOTE {number} YES", hours + 4),
        message(ADA, "AWARD 5", hours + 7 * 24 + 3),
    ]


def bodies(mbox: Path, thread: str = "") -> list[tuple[str, str]]:
    """(subject, plain text) of every mail the referee sent (in `thread` only: the mail whose
    References name it, as the ruleset mail's thread `.ruleset@`)."""
    out = []
    for item in mailbox.mbox(str(mbox)):
        if thread not in str(item["References"] or ""):
            continue
        part = next(p for p in item.walk() if p.get_content_type() == "text/plain")
        payload = part.get_payload(decode=True)
        assert isinstance(payload, bytes)
        out.append((str(item["Subject"]), payload.decode(part.get_content_charset() or "utf-8")))
    return out


def replay_game(
    settings: Path, script: Sequence[EmailMessage], folder: Path
) -> tuple[dict[str, Any], Path]:
    """Replay the players' mails through `nomic-referee replay`: the game's public state and
    the mbox of what the referee sent."""
    box_path = folder / "game.mbox"
    box = mailbox.mbox(str(box_path))
    for item in script:
        entry = mailbox.mboxMessage(item.as_bytes())
        entry.set_from(
            str(item["From"]), email.utils.parsedate_to_datetime(item["Date"]).timetuple()
        )
        box.add(entry)
    box.close()
    sent = folder / "sent.mbox"
    done = cli("replay", settings, box_path, "--json", "--out", sent)
    assert done.returncode == 0, done.stderr
    state: dict[str, Any] = json.loads(done.stdout)
    return state, sent


def ruleset_order(sent: Path) -> list[int]:
    """The rule numbers of the last ruleset mail, in the order it lists them."""
    rulesets = [text for _, text in bodies(sent, ".ruleset@")]  # one thread per game (205)
    return [int(n) for n in re.findall(r"^(?:#+ )?(?:Rule|Regola) (\d+)\b", rulesets[-1], re.M)]
