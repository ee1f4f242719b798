"""docs/operations.md's Postfix recipes, as written, against a real Postfix (issue 29, item 4).

The recipe used to be refused by Postfix (`User unknown in local recipient table`: it lacked
`local_recipient_maps`), and its other variant needed a Unix user per game. Here each recipe
is read from the docs' code blocks, its files written into a Postfix of the test's own (its
paths moved to the test's folder, the referee's port to the test's), and a player's mail sent
to Postfix over SMTP must reach a `run` process over LMTP and be answered; an address no game
has is refused at RCPT, before any queue.
"""

from __future__ import annotations

import mailbox
import os
import re
import signal
import smtplib
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest

from tests.mailstack import free_port, wait_port
from tests.postfix import Postfix, postfix_available
from tests.sink import eventually, game_config, start_run

ROOT = Path(__file__).resolve().parents[1]
DOCS = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
GAME = "nomic@games.example.org"
CLI = [sys.executable, "-c", "from referee.cli import main; main()"]

pytestmark = pytest.mark.skipif(
    not postfix_available(), reason="no Postfix here (tests/run.sh installs it, as root)"
)


def recipes() -> dict[str, dict[str, str]]:
    """Each Postfix recipe of the LMTP section: the files it names (main.cf, maps), by what
    its main.cf sets (`transport_maps`, `virtual_transport`)."""
    start = DOCS.index("## Direct delivery over LMTP")
    section = DOCS[start : DOCS.index("\n## ", start + 1)]
    found: dict[str, dict[str, str]] = {}
    for block in re.findall(r"```\n(# /etc/postfix/main\.cf\n.*?)```", section, re.DOTALL):
        files: dict[str, str] = {}
        name = ""
        for line in block.splitlines():
            header = re.match(r"# /etc/postfix/(\S+)", line)
            if header:
                name = header.group(1)
                files[name] = ""
            elif not line.startswith("#"):
                files[name] += line + "\n"
        kind = "virtual" if "virtual_transport" in files["main.cf"] else "transport_maps"
        found[kind] = files
    return found


@pytest.fixture
def base() -> Iterator[Path]:
    # Its own folder, not pytest's: Postfix's user walks into it, and pytest's are 0700.
    with tempfile.TemporaryDirectory(prefix="nomic-postfix-") as name:
        Path(name).chmod(0o755)
        yield Path(name)


def referee(folder: Path, lmtp_port: int) -> tuple[Path, Path]:
    """A game at GAME taking its mail over LMTP, its mail written to the sent Maildir."""
    config = game_config(folder, f"sqlite:///{folder / 'nomic.db'}")
    text = config.read_text(encoding="utf-8").replace(
        'address = "referee@nomic.example"', f'address = "{GAME}"'
    )
    text += f"\n[lmtp]\nport = {lmtp_port}\n\n[auth]\nrequired = false\n"
    config.write_text(text, encoding="utf-8")
    return config, folder / "sent"


def letter(to: str, mid: str) -> bytes:
    message = EmailMessage()
    message["From"], message["To"] = "bob@example.org", to
    message["Subject"], message["Message-ID"] = "status", mid
    message.set_content("STATUS")
    return message.as_bytes()


def answered(sent: Path, mid: str) -> bool:
    if not (sent / "new").is_dir():
        return False
    return any(m["In-Reply-To"] == mid for m in mailbox.Maildir(str(sent), create=False))


@pytest.mark.parametrize("kind", ["transport_maps", "virtual"])
def test_the_docs_postfix_recipe_delivers_to_the_referee(kind: str, base: Path) -> None:
    files = recipes()[kind]
    lmtp_port = free_port()
    written = {
        name: text.replace("/etc/postfix/", f"{base / 'postfix' / 'etc'}/").replace(
            "127.0.0.1:8024", f"127.0.0.1:{lmtp_port}"
        )
        for name, text in files.items()
    }
    main = written.pop("main.cf")
    if kind == "transport_maps":  # the recipe's premise: Postfix delivers the domain locally
        main = "mydestination = localhost, games.example.org\n" + main
    (base / "postfix").mkdir()
    postfix = Postfix(base / "postfix", main, written).start()
    config, sent = referee(base / "game", lmtp_port)
    made = subprocess.run([*CLI, "init", str(config)], capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    log = base / "run.log"
    process = start_run([config], log)
    try:
        wait_port(lmtp_port, 60)
        with smtplib.SMTP("127.0.0.1", postfix.port, timeout=30) as client:
            client.sendmail("bob@example.org", [GAME], letter(GAME, "<p1@example.org>"))
            stranger = "no-such-game@games.example.org"
            with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
                client.sendmail("bob@example.org", [stranger], letter(stranger, "<p2@x.org>"))
        code, text = refused.value.recipients[stranger]
        assert code == 550 and b"User unknown" in text, (code, text)
        eventually(
            lambda: answered(sent, "<p1@example.org>"),
            90,
            f"the referee's answer\n{postfix.log_text()[-3000:]}\n{log.read_text()[-3000:]}",
        )
        assert re.search(rf"to=<{re.escape(GAME)}>.*status=sent \(250", postfix.log_text())
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(60)
        postfix.stop()
