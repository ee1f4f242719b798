"""Signed results (213): with `[dkim]` every mail leaves signed, `verify` checks the signatures
of the mail a player kept, and `doctor` says whether the DNS publishes the key.

The operator's path as the README gives it: `dkim-key` makes the key and prints the record,
the game is played through the live service (Maildir in, `sent/` out), and the player's copy
of the sent mail is verified; a mail re-signed with another key is named.
"""

from __future__ import annotations

import mailbox
import stat
import subprocess
import sys
from collections.abc import Iterator
from email import message_from_bytes
from pathlib import Path

import dkim
import pytest

from examples.make_examples import START, build
from referee.config import Settings, load_settings
from referee.doctor import _dkim
from referee.mail.signing import Signer, new_key
from referee.store.store import Store
from referee.verify import verify
from tests.sink import game_config, play_by_maildir

CLI = [sys.executable, "-c", "from referee.cli import main; main()"]


@pytest.fixture
def signed_game(tmp_path: Path) -> Iterator[tuple[Path, Settings, Signer]]:
    config = game_config(tmp_path, f"sqlite:///{tmp_path / 'live.db'}")
    with config.open("a", encoding="utf-8") as out:
        out.write('\n[dkim]\nselector = "nomic2026"\nkey_file = "keys/dkim.pem"\n')
    done = subprocess.run([*CLI, "dkim-key", str(config)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    key = tmp_path / "keys" / "dkim.pem"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    settings = load_settings(config)
    assert settings.dkim is not None
    signer = Signer.load(settings.dkim, "nomic.example")
    assert f'nomic2026._domainkey.nomic.example. IN TXT "{signer.record}"' in done.stdout
    again = subprocess.run([*CLI, "dkim-key", str(config)], capture_output=True, text=True)
    assert again.returncode == 0 and key.read_bytes() == signer.key  # never a second key
    _, mails = build("en")
    mails = mails[:8]
    store = Store(settings.database_url)
    try:
        game_id = play_by_maildir(store, settings, START, mails)
        kept = [row.raw for row in store.outbox(game_id)]
    finally:
        store.close()
    assert kept and not any(b"DKIM-Signature" in raw.split(b"\n\n", 1)[0] for raw in kept)
    from referee.replay import write_mbox

    write_mbox(tmp_path / "inbound.mbox", [(raw, at) for raw, at, _ in mails], "player@x.org")
    yield tmp_path, settings, signer


def test_every_mail_leaves_signed_and_verify_checks_the_signatures(
    signed_game: tuple[Path, Settings, Signer],
) -> None:
    folder, settings, signer = signed_game
    box = mailbox.Maildir(str(settings.sent), create=False)
    sent = [box.get_bytes(key) for key in box.iterkeys()]
    assert len(sent) > 10
    for raw in sent:
        header = str(message_from_bytes(raw)["DKIM-Signature"])
        assert "d=nomic.example" in header and "s=nomic2026" in header
        assert "x-nomic-chain" in header.lower()  # the chain's head is signed too
        assert dkim.verify(raw, dnsfunc=signer.dns())
    verdict = verify(settings, folder / "inbound.mbox", settings.sent)
    assert verdict.ok, verdict.divergence
    assert verdict.signatures_checked == verdict.sent_checked == len(sent)
    given = [str(folder / "game.toml"), str(folder / "inbound.mbox"), "--sent", str(settings.sent)]
    done = subprocess.run(
        [*CLI, "verify", *given],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"signatures: {len(sent)} DKIM signatures good" in done.stdout


def test_a_mail_signed_by_another_key_is_named(
    signed_game: tuple[Path, Settings, Signer],
) -> None:
    folder, settings, signer = signed_game
    box = mailbox.Maildir(str(settings.sent), create=False)
    key = next(box.iterkeys())
    raw = box.get_bytes(key)
    bare = _strip_signature(raw)  # the signature taken off: the bytes the rules give
    forger = Signer(signer.selector, signer.domain, new_key(folder / "forger.pem"))
    box[key] = mailbox.MaildirMessage(forger.sign(bare))
    verdict = verify(settings, folder / "inbound.mbox", settings.sent)
    assert not verdict.ok and verdict.divergence is not None
    assert "DKIM signature does not verify" in verdict.divergence.what
    assert verdict.divergence.where.startswith("sent mail <")


def _strip_signature(raw: bytes) -> bytes:
    """The mail without its DKIM-Signature header (and its folded lines)."""
    head, _, body = raw.replace(b"\r\n", b"\n").partition(b"\n\n")
    kept: list[bytes] = []
    skipping = False
    for line in head.split(b"\n"):
        if skipping and line[:1] in (b" ", b"\t"):
            continue
        skipping = line.lower().startswith(b"dkim-signature:")
        if not skipping:
            kept.append(line)
    return b"\n".join(kept) + b"\n\n" + body


def test_doctor_says_whether_the_dns_publishes_the_key(
    signed_game: tuple[Path, Settings, Signer],
) -> None:
    _folder, settings, signer = signed_game
    assert settings.dkim is not None
    record = signer.record.encode()
    published = _dkim(settings.dkim, "nomic.example", lambda name, timeout=5: record)
    assert published.status == "OK", published
    other = Signer.load(settings.dkim, "nomic.example").record.replace("p=M", "p=X")
    wrong = _dkim(settings.dkim, "nomic.example", lambda name, timeout=5: other.encode())
    assert wrong.status == "FAIL" and "another key" in wrong.detail
    missing = _dkim(settings.dkim, "nomic.example", lambda name, timeout=5: None)
    assert missing.status == "FAIL" and "no record" in missing.detail

    def offline(name: bytes, timeout: int = 5) -> bytes:
        raise dkim.DnsTimeoutError("no network")

    unknown = _dkim(settings.dkim, "nomic.example", offline)
    assert unknown.status == "WARN" and signer.record in unknown.fix


def test_a_bad_key_stops_run_with_the_file_named(tmp_path: Path) -> None:
    config = game_config(tmp_path, f"sqlite:///{tmp_path / 'live.db'}")
    with config.open("a", encoding="utf-8") as out:
        out.write('\n[dkim]\nselector = "nomic"\nkey_file = "broken.pem"\n')
    (tmp_path / "broken.pem").write_text("not a key\n", encoding="utf-8")
    assert subprocess.run([*CLI, "init", str(config)], capture_output=True).returncode == 0
    done = subprocess.run(
        [*CLI, "run", str(config), "--once"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert "broken.pem" in done.stderr and "not an RSA private key" in done.stderr
