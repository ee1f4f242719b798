"""A player's mail bounces: the King, or the operator, is told, never looped (issue 17; 205).

Driven as an operator runs it: players' mail and a real-shaped DSN (multipart/report, as
Postfix writes it, with the returned message whole or only its headers) are delivered into
the game's Maildir, `nomic-referee run --once` reads them, and what the referee sends is read
from the `sent` Maildir. Both languages.
"""

from __future__ import annotations

import mailbox
import os
import subprocess
import sys
import time
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

import pytest

from referee.desk.bounces import read_bounce
from tests.conftest import CONFIG
from tests.helpers import ADA, BOB, mail

CLI = [sys.executable, "-c", "from referee.cli import main; main()"]
REFEREE = "referee@nomic.example"
SECRET = "Diagnostic-Words-Of-The-Remote-Server"  # the bounce's own text: never passed on


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*CLI, *map(str, args)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def game(folder: Path, language: str, operator: str = "") -> Path:
    text = CONFIG.format(language=language)
    if operator:
        text = text.replace("[game]\n", f'[game]\noperator = "{operator}"\n', 1)
    path = folder / "game.toml"
    path.write_text(text, encoding="utf-8")
    cli("init", path)
    return path


_count = iter(range(10**6))


def deliver(folder: Path, raw: bytes) -> None:
    """As an MTA delivers into the game's Maildir: tmp/, then new/."""
    name = f"{int(time.time())}.{next(_count)}.test"
    (folder / "maildir" / "tmp").mkdir(parents=True, exist_ok=True)
    (folder / "maildir" / "new").mkdir(parents=True, exist_ok=True)
    (folder / "maildir" / "tmp" / name).write_bytes(raw)
    os.replace(folder / "maildir" / "tmp" / name, folder / "maildir" / "new" / name)


def sent(folder: Path) -> list[EmailMessage]:
    out = []
    for item in mailbox.Maildir(str(folder / "sent"), create=False):
        message = message_from_bytes(item.as_bytes(), policy=policy.default)
        assert isinstance(message, EmailMessage)
        out.append(message)
    return out


def text_of(message: EmailMessage) -> str:
    body = message.get_body(("plain",))
    assert body is not None
    return " ".join(str(body.get_content()).split())


def dsn(original: EmailMessage, recipient: str, whole: bool, action: str = "failed") -> bytes:
    """A delivery status notification as Postfix writes it."""
    returned = (
        original.as_bytes()
        if whole
        else b"".join(f"{k}: {v}\n".encode() for k, v in original.items() if k != "Content-Type")
    )
    kind = "message/rfc822" if whole else "text/rfc822-headers"
    status = "5.1.1" if action == "failed" else "4.4.1"
    return (
        (
            "From: MAILER-DAEMON@mx.nomic.example (Mail Delivery System)\n"
            f"To: {REFEREE}\n"
            "Subject: Undelivered Mail Returned to Sender\n"
            "Auto-Submitted: auto-replied\n"
            f"Message-Id: <20261201.{next(_count)}@mx.nomic.example>\n"
            "MIME-Version: 1.0\n"
            'Content-Type: multipart/report; report-type=delivery-status; boundary="B0"\n'
            "\n"
            "--B0\n"
            "Content-Description: Notification\n"
            "Content-Type: text/plain; charset=us-ascii\n"
            "\n"
            "This is the mail system at host mx.nomic.example.\n\n"
            f"<{recipient}>: host mx.example.org said: 550 5.1.1 {SECRET}\n"
            "VOTE 301 YES\n"  # words in a bounce are never commands
            "\n"
            "--B0\n"
            "Content-Description: Delivery report\n"
            "Content-Type: message/delivery-status\n"
            "\n"
            "Reporting-MTA: dns; mx.nomic.example\n"
            "X-Postfix-Queue-ID: 3F2A1C0042\n"
            "\n"
            f"Final-Recipient: rfc822; {recipient}\n"
            f"Original-Recipient: rfc822;{recipient}\n"
            f"Action: {action}\n"
            f"Status: {status}\n"
            "Remote-MTA: dns; mx.example.org\n"
            f"Diagnostic-Code: smtp; 550 5.1.1 <{recipient}>: {SECRET}\n"
            "\n"
            "--B0\n"
            "Content-Description: Undelivered Message\n"
            f"Content-Type: {kind}\n"
            "\n"
        ).encode()
        + returned
        + b"\n--B0--\n"
    )


def replies_to(folder: Path, player: str) -> list[EmailMessage]:
    return [m for m in sent(folder) if str(m["To"].addresses[0].addr_spec) == player]


def bounce_notices(folder: Path) -> list[EmailMessage]:
    return [m for m in sent(folder) if "could not be delivered" in str(m["Subject"])] + [
        m for m in sent(folder) if "non è stata recapitata" in str(m["Subject"])
    ]


@pytest.mark.parametrize(("language", "whole"), [("en", True), ("it", False)])
def test_the_king_is_told_when_a_players_mail_bounces(
    tmp_path: Path, language: str, whole: bool
) -> None:
    config = game(tmp_path, language)
    deliver(tmp_path, mail(BOB, "STATUS" if language == "en" else "STATO", message_id="<s@x.org>"))
    cli("run", config, "--once")
    reply = next(m for m in replies_to(tmp_path, BOB) if m["In-Reply-To"] == "<s@x.org>")
    before = len(sent(tmp_path))

    deliver(tmp_path, dsn(reply, BOB, whole))
    cli("run", config, "--once")
    after = sent(tmp_path)
    assert len(after) == before + 1, "one notice, and no answer to the bounce"
    notice = bounce_notices(tmp_path)
    assert len(notice) == 1
    told = notice[0]
    assert str(told["To"].addresses[0].addr_spec) == ADA  # the King
    assert told["Auto-Submitted"] == "auto-generated"
    words = text_of(told)
    assert "Bob Rossi" in words and BOB in words and "5.1.1" in words
    assert str(reply["Subject"]) in words  # which mail: the referee's own subject
    assert SECRET not in told.as_string() and "VOTE 301" not in words  # nothing of the bounce
    if language == "it":
        assert "tornata indietro" in words and "come Re" in words
    else:
        assert "came back undelivered" in words and "as King" in words

    # A second bounce for Bob the same day: no second notice. A bounce of the notice itself
    # (the King's mailbox is gone too): no one is told, so no loop.
    deliver(tmp_path, mail(BOB, "HELP" if language == "en" else "AIUTO", message_id="<h@x.org>"))
    cli("run", config, "--once")
    help_reply = next(m for m in replies_to(tmp_path, BOB) if m["In-Reply-To"] == "<h@x.org>")
    deliver(tmp_path, dsn(help_reply, BOB, whole))
    deliver(tmp_path, dsn(told, ADA, whole))
    cli("run", config, "--once")
    assert len(bounce_notices(tmp_path)) == 1
    assert len(sent(tmp_path)) == before + 2  # only the HELP reply


def test_the_operator_is_told_instead_and_reports_that_are_no_failure_tell_no_one(
    tmp_path: Path,
) -> None:
    config = game(tmp_path, "en", operator="ops@nomic.example")
    deliver(tmp_path, mail(BOB, "STATUS", message_id="<s@x.org>"))
    deliver(tmp_path, mail(ADA, "STATUS", message_id="<a@x.org>"))
    cli("run", config, "--once")
    to_bob = next(m for m in replies_to(tmp_path, BOB) if m["In-Reply-To"] == "<s@x.org>")
    to_ada = next(m for m in replies_to(tmp_path, ADA) if m["In-Reply-To"] == "<a@x.org>")
    deliver(tmp_path, dsn(to_bob, BOB, True, action="delayed"))  # a warning: not a bounce
    cli("run", config, "--once")
    assert bounce_notices(tmp_path) == []

    deliver(tmp_path, dsn(to_ada, ADA, True))  # the King's own mail bounced: the operator
    never = mail(REFEREE, "?", message_id="<f@x.org>")
    never_sent = message_from_bytes(never, policy=policy.default)
    assert isinstance(never_sent, EmailMessage)
    deliver(tmp_path, dsn(never_sent, BOB, True))  # names no mail the referee sent
    cli("run", config, "--once")
    notices = bounce_notices(tmp_path)
    assert [str(m["To"].addresses[0].addr_spec) for m in notices] == ["ops@nomic.example"]
    assert "Ada Lovelace" in text_of(notices[0]) and "as King" not in text_of(notices[0])


def test_reading_a_bounce_keeps_only_ids_recipients_and_a_code() -> None:
    original = EmailMessage()
    original["From"], original["To"], original["Message-ID"] = REFEREE, BOB, "<r1@nomic.example>"
    original["Subject"] = "Re: move"
    original.set_content("Done.")
    report = read_bounce(dsn(original, BOB, whole=False))
    assert report.message_ids == ("<r1@nomic.example>",)
    assert report.recipients == (BOB,) and report.status == "5.1.1" and report.failed
    delayed = read_bounce(dsn(original, BOB, whole=True, action="delayed"))
    assert delayed.message_ids == ("<r1@nomic.example>",) and not delayed.failed
    receipt = dsn(original, BOB, whole=True).replace(
        b"report-type=delivery-status", b"report-type=disposition-notification"
    )
    assert not read_bounce(receipt).failed  # a read receipt is no bounce
    plain = (
        b"From: MAILER-DAEMON@old.example\nSubject: failure notice\nMessage-ID: <own@old>\n\n"
        b"Sorry, I could not deliver.\n--- Below this line is a copy of the message.\n\n"
        b"Message-ID: <r1@nomic.example>\nSubject: Re: move\n"
    )
    old = read_bounce(plain)
    assert old.message_ids == ("<r1@nomic.example>",) and old.failed
