"""A real mail stack for tests: Dovecot (IMAP, IMAPS, LMTP) and an SMTP server delivering into it.

Dovecot runs from a standalone config in a temporary folder on free loopback ports, with a
self-signed certificate for localhost. The SMTP server is aiosmtpd: it delivers each message
into Dovecot over LMTP before it answers 250, so a sent message is in the mailbox when the
send returns. Players read their mailboxes with the stdlib's imaplib.
"""

from __future__ import annotations

import asyncio
import contextlib
import imaplib
import os
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from email import message_from_bytes, policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP as SMTPServer
from aiosmtpd.smtp import Envelope, Session

if TYPE_CHECKING:
    from referee.runner import Service

PASSWORD = "secret"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ensure_dovecot() -> None:
    """Install Dovecot with apt-get when it is missing, and the system user it delivers as."""
    if shutil.which("dovecot") is None:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(
            [
                "apt-get",
                "install",
                "-y",
                "-qq",
                "--no-install-recommends",
                "dovecot-imapd",
                "dovecot-lmtpd",
                "openssl",
            ],
            check=True,
            env=env,
        )
    if subprocess.run(["id", "vmail"], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "--system", "--no-create-home", "vmail"], check=True)


def wait_port(port: int, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on port {port}")


def _alive(pid: int) -> bool:
    """True while the process runs; a zombie nobody reaps counts as gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status


def _session_members(session: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 3 and int(fields[3]) == session:  # field 6 of stat: the session id
            members.append(int(entry.name))
    return members


def wait_closed(port: int, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
        except OSError:
            return
        time.sleep(0.05)


CONFIG = """
protocols = imap lmtp
listen = 127.0.0.1
base_dir = {root}/run
state_dir = {root}/state
log_path = {root}/dovecot.log
ssl = yes
ssl_cert = <{root}/cert.pem
ssl_key = <{root}/key.pem
disable_plaintext_auth = no
auth_mechanisms = plain login
auth_failure_delay = 0
mail_location = maildir:~/Maildir
mail_max_userip_connections = 200
first_valid_uid = 1
mail_uid = vmail
mail_gid = vmail
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {root}/passwd
}}
userdb {{
  driver = static
  args = uid=vmail gid=vmail home={root}/home/%u
}}
namespace inbox {{
  inbox = yes
  separator = /
}}
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {imap}
  }}
  inet_listener imaps {{
    address = 127.0.0.1
    port = {imaps}
    ssl = yes
  }}
}}
service lmtp {{
  inet_listener lmtp {{
    address = 127.0.0.1
    port = {lmtp}
  }}
}}
protocol lmtp {{
  postmaster_address = postmaster@nomic.example
}}
"""


def _parse(raw: bytes) -> EmailMessage:
    try:
        message = message_from_bytes(raw, policy=policy.default)
    except RecursionError:  # a hostile message nested too deep: its headers will do
        message = BytesParser(policy=policy.default).parsebytes(raw, headersonly=True)
    assert isinstance(message, EmailMessage)
    return message


class _Deliver:
    """aiosmtpd handler: hand each message to Dovecot's LMTP, one recipient at a time."""

    def __init__(self, lmtp_port: int) -> None:
        self.lmtp_port = lmtp_port
        self.received = 0

    async def handle_DATA(self, server: SMTPServer, session: Session, envelope: Envelope) -> str:
        data = envelope.original_content or b""
        for recipient in envelope.rcpt_tos:
            with smtplib_lmtp(self.lmtp_port) as lmtp:
                lmtp.sendmail(envelope.mail_from or "", [recipient], data)
        self.received += 1
        return "250 OK delivered"


@contextlib.contextmanager
def smtplib_lmtp(port: int) -> Iterator[Any]:
    import smtplib

    client = smtplib.LMTP("127.0.0.1", port)
    try:
        yield client
    finally:
        with contextlib.suppress(Exception):
            client.quit()


class MailStack:
    """Dovecot plus an SMTP server, in `root`; users are mailbox names (local parts)."""

    def __init__(self, root: Path, users: list[str], extra_config: str = "") -> None:
        ensure_dovecot()
        # Dovecot's processes (users dovecot and vmail) must reach the folder. pytest keeps its
        # own temporary root at mode 0700 (and resets it whenever another pytest starts), so
        # the stack lives in a folder of its own, which `root` links to for whoever looks.
        self.root = Path(tempfile.mkdtemp(prefix="nomic-stack-"))
        self.root.chmod(0o755)
        root.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            root.symlink_to(self.root, target_is_directory=True)
        self.imap_port, self.imaps_port = free_port(), free_port()
        self.lmtp_port, self.smtp_port = free_port(), free_port()
        self.users = users
        self.config = self.root / "dovecot.conf"
        self._certificate()
        (self.root / "passwd").write_text(
            "".join(f"{u}:{{PLAIN}}{PASSWORD}\n" for u in users), encoding="utf-8"
        )
        (self.root / "home").mkdir(exist_ok=True)
        shutil.chown(self.root / "home", "vmail", "vmail")
        self.config.write_text(
            CONFIG.format(
                root=self.root, imap=self.imap_port, imaps=self.imaps_port, lmtp=self.lmtp_port
            )
            + extra_config,
            encoding="utf-8",
        )
        self.controller: Controller | None = None
        self.handler = _Deliver(self.lmtp_port)

    def _certificate(self) -> None:
        subprocess.run(
            [
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "2",
                "-subj",
                "/CN=localhost",
                "-addext",
                "subjectAltName=DNS:localhost,IP:127.0.0.1",
                "-keyout",
                str(self.root / "key.pem"),
                "-out",
                str(self.root / "cert.pem"),
            ],
            check=True,
            capture_output=True,
        )

    @property
    def ca_file(self) -> Path:
        return self.root / "cert.pem"

    def start_imap(self) -> None:
        subprocess.run(["dovecot", "-c", str(self.config)], check=True)
        for port in (self.imap_port, self.imaps_port, self.lmtp_port):
            wait_port(port)

    def stop_imap(self) -> None:
        """SIGTERM to Dovecot's master (faster than `doveadm stop`), then wait for it to go."""
        pid_file = self.root / "run" / "master.pid"
        try:
            pid = int(pid_file.read_text().strip())
        except (OSError, ValueError):
            return
        session = os.getsid(pid) if _alive(pid) else None
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        time.sleep(0.2)
        # Its login processes wait 5 s for a stats process already gone: end them all now,
        # every process of the master's session (they are not all in its process group).
        if session is not None:
            for other in _session_members(session):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(other, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.02)
        for port in (self.imap_port, self.imaps_port, self.lmtp_port):
            wait_closed(port)
        pid_file.unlink(missing_ok=True)  # a zombie's pid would stop the next start

    def start_smtp(self) -> None:
        self.controller = Controller(self.handler, hostname="127.0.0.1", port=self.smtp_port)
        self.controller.start()

    def stop_smtp(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None

    def start(self) -> MailStack:
        self.start_imap()
        self.start_smtp()
        return self

    def stop(self) -> None:
        self.stop_smtp()
        self.stop_imap()
        shutil.rmtree(self.root, ignore_errors=True)

    # ----- what a player does --------------------------------------------------------------

    def deliver(self, user: str, raw: bytes) -> None:
        """Put a message into `user`'s INBOX through LMTP, as the MTA would."""
        with smtplib_lmtp(self.lmtp_port) as lmtp:
            lmtp.sendmail("sender@example.org", [user], raw)

    def append(self, user: str, raw: bytes, at: datetime) -> None:
        """Put a message into `user`'s INBOX delivered at `at` (IMAP APPEND with an internal
        date): a test's mail carries the test's own clock, never the real one."""
        client = imaplib.IMAP4("127.0.0.1", self.imap_port)
        try:
            client.login(user, PASSWORD)
            status, answer = client.append("INBOX", "", imaplib.Time2Internaldate(at), raw)
            if status != "OK":
                raise RuntimeError(f"APPEND for {user} refused: {answer!r}")
        finally:
            with contextlib.suppress(Exception):
                client.logout()

    def read(self, user: str, folder: str = "INBOX") -> list[EmailMessage]:
        """Every message in a user's folder, oldest first."""
        client = imaplib.IMAP4("127.0.0.1", self.imap_port)
        try:
            client.login(user, PASSWORD)
            status, _ = client.select(f'"{folder}"', readonly=True)
            if status != "OK":
                return []
            _, data = client.uid("SEARCH", "ALL")
            uids = data[0].split() if data and data[0] else []
            out: list[EmailMessage] = []
            for uid in uids:
                _, parts = client.uid("FETCH", uid, "(BODY.PEEK[])")
                for part in parts:
                    if isinstance(part, tuple):
                        out.append(_parse(part[1]))
            return out
        finally:
            with contextlib.suppress(Exception):
                client.logout()

    def tls_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca_file))


def takes_signals(pid: int) -> None:
    """Wait until the process catches SIGTERM: from its first line of Python on. Before that
    the interpreter itself is starting, and the kernel's default action is all there is."""
    mask = 1 << (signal.SIGTERM - 1)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = Path(f"/proc/{pid}/status").read_text()
        caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
        if int(caught.split()[1], 16) & mask:
            return
        time.sleep(0.001)
    raise AssertionError("the service never took SIGTERM")


@contextmanager
def running(service: Service) -> Iterator[None]:
    """The service's event loop in a thread, stopped (as SIGTERM would) at the end."""
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    done = threading.Event()

    def main() -> None:
        asyncio.set_event_loop(loop)

        async def go() -> None:
            await service.run_forever(stop)

        loop.run_until_complete(go())
        leftover = asyncio.all_tasks(loop)  # as asyncio.run does: cancel, await, close
        for task in leftover:
            task.cancel()
        if leftover:
            loop.run_until_complete(asyncio.gather(*leftover, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()
        done.set()

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    try:
        yield
    finally:
        loop.call_soon_threadsafe(stop.set)
        assert done.wait(30), "the service did not stop"
        thread.join(5)
