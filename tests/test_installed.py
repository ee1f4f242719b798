"""What users install: the sdist and the wheel, in a fresh virtualenv, from other folders (issue 6).

The package is built as a user's pip builds it (sdist, then the wheel from the sdist), installed
in a new virtualenv in a temporary folder outside the checkout, with no PYTHONPATH, and driven
by the README's own commands, read from README.md: the first command (`pip install .` and the
demo), the quick start (the example replay to Bob Rossi's win, with the mail count and the
points the README states), the real-game commands (`init --write-config`, `init`, `run`), and
moves through `run --once` on the Maildir. When the README and what it runs drift apart, this
fails: whoever changes the mail updates the README's figures.
"""

from __future__ import annotations

import mailbox
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
IGNORED = (".git", "__pycache__", "*.egg-info", "build", "dist", ".*_cache", "nomic-demo", "*.db*")
TIMEOUT = 900  # seconds for one pip step: PyPI downloads on a cold cache


def sh_blocks(section: str | None = None) -> list[str]:
    """The ```sh blocks of the README, or of one of its `## ` sections."""
    text = README
    if section is not None:
        start = README.index(f"## {section}")
        end = README.find("\n## ", start + 1)
        text = README[start : end if end != -1 else None]
    return re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL)


def readme_figure(pattern: str) -> str:
    found = re.search(pattern, README)
    assert found, f"the README no longer says {pattern!r}"
    return found.group(1)


@dataclass(frozen=True)
class Installed:
    venv: Path
    source: Path  # the unpacked sdist: a user's checkout, outside ours
    wheel: Path
    work: Path

    def env(self) -> dict[str, str]:
        env = clean_env()
        env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(self.venv)
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        return env

    def shell(self, script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        """Run README lines as written, with the virtualenv first on PATH."""
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=cwd,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert done.returncode == 0, f"{script}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        return done

    def referee(self, *args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
        return self.shell(shlex.join(["nomic-referee", *map(str, args)]), cwd)


def clean_env() -> dict[str, str]:
    """The environment without PYTHONPATH: the tests' own points at the checkout."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def _run(*args: str | Path, cwd: Path | None = None) -> None:
    done = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, f"{args}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def _data_files(folder: str) -> set[str]:
    return {
        p.relative_to(ROOT / folder).as_posix()
        for p in (ROOT / folder).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


@pytest.fixture(scope="module")
def installed() -> Iterator[Installed]:
    # Its own temporary folder, not pytest's numbered ones: pytest runs started meanwhile
    # (another checkout's suite on the same machine) prune those, venv and all.
    with tempfile.TemporaryDirectory(prefix="nomic-installed-") as name:
        yield from _install(Path(name))


def _install(base: Path) -> Iterator[Installed]:
    dist, checkout = base / "dist", base / "checkout"
    # A copy of the checkout, so that the build's egg-info never lands in ours; then the sdist,
    # and the wheel built from the unpacked sdist: what pip does with a download.
    shutil.copytree(ROOT, checkout, ignore=shutil.ignore_patterns(*IGNORED))
    _run(sys.executable, "-m", "build", "--outdir", dist, checkout)
    wheel = next(dist.glob("*.whl"))
    sdist = next(dist.glob("*.tar.gz"))
    with tarfile.open(sdist) as archive:
        archive.extractall(base, filter="data")
    source = next(p for p in base.iterdir() if p.is_dir() and p.name.startswith("nomic_referee-"))
    venv = base / "venv"
    _run(sys.executable, "-m", "venv", venv)  # a fresh one: no system site-packages
    _run(venv / "bin" / "python", "-m", "pip", "install", "--quiet", wheel)
    work = base / "elsewhere"
    work.mkdir()
    yield Installed(venv, source, wheel, work)


def test_the_wheel_and_the_sdist_carry_the_rulesets_and_templates(installed: Installed) -> None:
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
    for folder in ("ruleset", "templates"):
        expected = _data_files(folder)
        assert len(expected) > 10
        assert {f"referee/{folder}/{f}" for f in expected} <= names
        assert {f for f in expected if not (installed.source / folder / f).is_file()} == set()
    code = {f"referee/{f}" for f in _data_files("referee") if f.endswith((".py", ".mako"))}
    assert code - names == set(), "a package is missing from [tool.setuptools] packages"
    for example in ("game-en.toml", "game-en.mbox", "game-it.toml", "game-it.mbox"):
        assert (installed.source / "examples" / example).is_file()


def test_the_package_runs_from_the_virtualenv_not_the_checkout(installed: Installed) -> None:
    done = installed.shell(
        "python -c \"import referee.resources as r; print(r.data_folder('ruleset'))\"",
        installed.work,
    )
    where = Path(done.stdout.strip())
    assert where.is_relative_to(installed.venv) and (where / "en" / "101.md").is_file()
    assert installed.referee("--version", cwd=installed.work).stdout.startswith("nomic-referee ")


def test_the_readmes_first_command_as_written(installed: Installed) -> None:
    first = sh_blocks()[0]
    assert "pip install ." in first and "nomic-referee demo" in first
    done = installed.shell(first, installed.source)  # pip install . from a user's checkout
    assert readme_figure(r"ends with\s+`(Winner: [^`]+)`") in done.stdout
    demo = installed.source / "nomic-demo"
    sent = len(mailbox.Maildir(str(demo / "sent"), create=False))
    assert f"{sent} mails the referee sent are in the Maildir" in done.stdout
    status = installed.referee("status", demo / "game.toml", cwd=installed.work).stdout
    assert "WINNER Bob Rossi" in status and f"outbox: 0 waiting, {sent} sent" in status
    export = installed.work / "demo.mbox"
    installed.referee("outbox", demo / "game.toml", "--export", export, cwd=installed.work)
    assert len(mailbox.mbox(str(export))) == sent


def test_the_readmes_quick_start_replays_to_bob_rossis_win(installed: Installed) -> None:
    (block,) = sh_blocks("Quick start: replay a whole game")
    sent = installed.source / "sent.mbox"
    sent.unlink(missing_ok=True)
    shutil.rmtree(installed.source / "site", ignore_errors=True)
    done = installed.shell(block, installed.source)
    assert (installed.source / "site" / "index.html").is_file(), done.stderr
    mails = int(readme_figure(r"`sent\.mbox` holds the ([\d,]+) mails").replace(",", ""))
    assert len(mailbox.mbox(str(sent))) == mails, "update the README's mail count"
    points = readme_figure(r"Bob Rossi wins with (\d+) points")
    assert "WINNER Bob Rossi" in done.stdout
    assert re.search(rf"^\s+{points}  Bob Rossi <bob@example\.org>$", done.stdout, re.M)
    assert '"winner": "bob@example.org"' in done.stdout  # the Italian replay, --json


def _drop(maildir: Path, sender: str, body: str) -> None:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = sender, "referee@nomic.example", "Nomic"
    message.set_content(body)
    mailbox.Maildir(str(maildir), create=False).add(message)


def _wait_for(check: object, seconds: float = 60) -> None:
    assert callable(check)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError("timed out")


def test_a_real_game_from_the_readme_on_the_maildir(installed: Installed) -> None:
    installed.shell(
        f"pip install --quiet --force-reinstall --no-deps {installed.wheel}", installed.work
    )
    game = installed.work / "real-game"
    game.mkdir()
    write, start = sh_blocks("The two commands")[1].strip().splitlines()
    installed.shell(write, game)  # nomic-referee init --write-config game.toml
    init, run = (part.strip() for part in start.split("&&"))
    assert init == "nomic-referee init game.toml" and run == "nomic-referee run game.toml"
    installed.shell(init, game)
    inbox, sent = game / "maildir", game / "sent"
    assert (inbox / "new").is_dir()

    service = subprocess.Popen(  # the service, as the README runs it, until SIGTERM
        shlex.split(run), cwd=game, env=installed.env(), stderr=subprocess.PIPE, text=True
    )
    try:
        _drop(inbox, "carla@example.org", "PROPOSE ENACT\nPlayers greet each other.\nEND")
        _wait_for(lambda: len(mailbox.Maildir(str(sent), create=False)) >= 10)
    finally:
        service.send_signal(signal.SIGTERM)
        _, errors = service.communicate(timeout=60)
    assert service.returncode == 0, errors
    assert "Traceback" not in errors

    now = datetime.now(UTC)
    for voter in ("ada@example.org", "bob@example.org", "carla@example.org"):
        _drop(inbox, voter, "VOTE 301 YES")
    moment = (now + timedelta(hours=1)).isoformat()
    done = installed.referee("run", "game.toml", "--once", "--now", moment, cwd=game)
    assert "processed 3 mails" in done.stdout and "written to sent/ 3" in done.stdout
    later = (now + timedelta(days=8)).isoformat()
    done = installed.referee("run", "game.toml", "--once", "--now", later, cwd=game)
    fired = re.search(r"(\d+) deadlines?\b", done.stdout)
    assert fired and int(fired.group(1)) >= 1, done.stdout  # the week of debate is over
    status = installed.referee("status", "game.toml", "--now", later, cwd=game).stdout
    assert "phase award" in status and "King Ada Lovelace" in status
    subjects = [str(m["Subject"]) for m in mailbox.Maildir(str(sent), create=False)]
    assert any("301" in s and "adopted" in s for s in subjects), subjects


DEBIAN_PYTHON = Path("/usr/bin/python3")
# The README's server lines that change the whole machine (packages, the system's service
# manager, /usr/local/bin): left out here, each named, and checked apart where it can be.
MACHINE_WIDE = ("apt-get install", "ln -s ", "install -m 0644 deploy/", "systemctl ")


def _externally_managed() -> bool:
    try:
        done = subprocess.run(
            [DEBIAN_PYTHON, "-c", "import sysconfig; print(sysconfig.get_path('stdlib'))"],
            capture_output=True,
            text=True,
            env=clean_env(),
        )
    except OSError:
        return False
    return (Path(done.stdout.strip()) / "EXTERNALLY-MANAGED").is_file()


@pytest.mark.skipif(
    not _externally_managed() or os.geteuid() != 0,
    reason="needs root and a system Python marked externally managed (Debian 12 and later)",
)
def test_the_readmes_server_install_as_written_on_an_externally_managed_python(
    installed: Installed,
) -> None:
    """ "Installing on a server", line by line, with Debian's own Python: pip outside a
    virtualenv is refused as the README says, the virtualenv takes the package, a user of its
    own makes and checks the game. Paths move into a temporary folder and the user gets a name
    of its own; the lines that change the whole machine are named in MACHINE_WIDE."""
    (block,) = sh_blocks("Installing on a server")
    refused = subprocess.run(
        [DEBIAN_PYTHON, "-m", "pip", "install", "--dry-run", str(installed.wheel)],
        capture_output=True,
        text=True,
        env=clean_env(),
    )
    assert refused.returncode != 0 and "externally-managed-environment" in refused.stderr
    user = f"nomic{os.getpid()}"
    base = Path(tempfile.mkdtemp(prefix="nomic-server-"))
    base.chmod(0o755)
    (base / "etc").mkdir()
    lines, skipped = [], []
    for line in block.strip().splitlines():
        if line.startswith(MACHINE_WIDE):
            skipped.append(line)
            continue
        line = line.replace("pip install .", f"pip install --quiet {installed.wheel}")
        line = line.replace("/opt/", f"{base}/opt/").replace("/srv/", f"{base}/srv/")
        line = line.replace("/etc/nomic-referee.env", f"{base}/etc/nomic-referee.env")
        line = re.sub(r" nomic$", f" {user}", line) if line.startswith("useradd") else line
        lines.append(line.replace("-u nomic ", f"-u {user} "))
    assert len(skipped) == 4 and any("systemctl enable --now" in s for s in skipped)
    venv_bin = base / "opt" / "nomic-referee" / "bin"
    env = clean_env()
    env["PATH"] = f"{venv_bin}{os.pathsep}{env['PATH']}"
    env.pop("VIRTUAL_ENV", None)
    script = "\n".join(["set -euo pipefail", f"PATH=/usr/bin:/usr/sbin:/bin:{venv_bin}", *lines])
    try:
        done = subprocess.run(
            ["bash", "-c", script],
            cwd=installed.source,  # the source folder, as the README's `deploy/` paths assume
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
        assert done.returncode == 0, f"{script}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        python = (venv_bin / "python").resolve()
        assert python.is_relative_to(Path("/usr")), python  # the system's own Python
        config = base / "srv" / "nomic" / "game.toml"
        assert config.is_file() and config.stat().st_uid != 0  # written by the game's own user
        assert list((base / "srv" / "nomic").glob("*.db")), "init made no database"
        assert "FAIL" not in done.stdout and "config" in done.stdout  # doctor's lines
        secrets = base / "etc" / "nomic-referee.env"
        assert oct(secrets.stat().st_mode & 0o777) == "0o600"
    finally:
        subprocess.run(["userdel", user], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)
