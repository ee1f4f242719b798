"""A Postfix of the test's own: its config folder, queue and log in a temporary folder, SMTP on
a free loopback port, started with `postfix -c DIR start` and stopped at the end (issue 29).

Debian's postfix package (tests/run.sh installs it) gives the programs; nothing of the
machine's own /etc/postfix is used but the list of services in master.cf, each made to run
without a chroot (the chroot would need copies of /etc files in the queue folder) and the
SMTP listener moved to the test's port. Logs go to a file (`maillog_file`), not syslog.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from pathlib import Path

from tests.mailstack import free_port, wait_closed, wait_port

SYSTEM_MASTER = Path("/etc/postfix/master.cf")


def postfix_available() -> bool:
    return shutil.which("postfix") is not None and SYSTEM_MASTER.is_file() and os.geteuid() == 0


class Postfix:
    """One Postfix instance; `main` is appended to its main.cf, `files` written beside it."""

    def __init__(self, root: Path, main: str, files: dict[str, str]) -> None:
        self.root = root
        self.config = root / "etc"
        self.queue = root / "queue"
        self.log = root / "postfix.log"
        self.port = free_port()
        root.chmod(0o755)  # the postfix user walks into its queue and data folders
        for folder in (self.config, self.queue, root / "data"):
            folder.mkdir(mode=0o755)
        shutil.chown(root / "data", "postfix")
        self.log.touch()
        given = set(re.findall(r"^(\w+)\s*=", main, re.MULTILINE))
        base = [line for line in self._main().splitlines() if line.split(" =")[0] not in given]
        (self.config / "main.cf").write_text("\n".join(base) + "\n" + main, encoding="utf-8")
        (self.config / "master.cf").write_text(self._master(), encoding="utf-8")
        for name, text in files.items():
            (self.config / name).write_text(text, encoding="utf-8")
        for name in files:
            if re.search(rf"hash:{re.escape(str(self.config / name))}\b", main):
                self.postfix_command("postmap", f"hash:{self.config / name}")

    def _main(self) -> str:
        return f"""\
compatibility_level = 3.6
queue_directory = {self.queue}
data_directory = {self.root / "data"}
maillog_file = {self.log}
maillog_file_prefixes = {self.root}
myhostname = mx.test.example
mydomain = test.example
myorigin = $myhostname
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
mydestination = localhost
relayhost =
alias_maps =
alias_database =
biff = no
smtputf8_enable = no
queue_run_delay = 1s
minimal_backoff_time = 1s
maximal_backoff_time = 2s
"""

    def _master(self) -> str:
        lines = []
        for line in SYSTEM_MASTER.read_text(encoding="utf-8").splitlines():
            fields = line.split()
            if line.startswith(("#", " ", "\t")) or len(fields) < 8:
                lines.append(line)
                continue
            if fields[1] == "inet" and fields[0] == "smtp":
                fields[0] = f"127.0.0.1:{self.port}"
            fields[4] = "n"  # no chroot
            lines.append("  ".join(fields))
        return "\n".join(lines) + "\n"

    def postfix_command(self, *args: str) -> str:
        done = subprocess.run(
            [*args[:1], "-c", str(self.config), *args[1:]],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, f"{args}: {done.stdout}{done.stderr}{self.log_text()}"
        return done.stdout

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""

    def start(self) -> Postfix:
        self.postfix_command("postfix", "start")
        wait_port(self.port, 30)
        return self

    def stop(self) -> None:
        with contextlib.suppress(AssertionError, subprocess.SubprocessError):
            self.postfix_command("postfix", "stop")
        wait_closed(self.port, 30)

    def queue_listing(self) -> str:
        return self.postfix_command("postqueue", "-p")
