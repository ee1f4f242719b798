"""The deploy files an operator installs: the hardened systemd unit, the env file, the
container image (built where a container runtime works) (issue 17, item 3)."""

from __future__ import annotations

import configparser
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"


def unit() -> configparser.RawConfigParser:
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(DEPLOY / "nomic-referee.service")
    return parser


def test_the_unit_is_hardened_and_names_the_venv_by_a_variable() -> None:
    service = unit()["Service"]
    assert service["User"] == "nomic" and service["NoNewPrivileges"] == "yes"
    assert service["ProtectSystem"] == "strict" and service["ReadWritePaths"] == "/srv/nomic"
    assert service["CapabilityBoundingSet"] == ""
    assert service["ExecStart"].startswith("/usr/bin/env ${VENV}/bin/nomic-referee run")
    assert "/usr/local/bin" not in (DEPLOY / "nomic-referee.service").read_text()
    env = (DEPLOY / "nomic-referee.env").read_text()
    assert "NOMIC_IMAP_PASSWORD=" in env and "NOMIC_SMTP_PASSWORD=" in env
    if shutil.which("systemd-analyze"):
        done = subprocess.run(
            ["systemd-analyze", "verify", str(DEPLOY / "nomic-referee.service")],
            capture_output=True,
            text=True,
        )
        assert done.returncode == 0, done.stderr


def _docker_works() -> bool:
    if shutil.which("docker") is None:
        return False
    done = subprocess.run(["docker", "info"], capture_output=True, timeout=30)
    return done.returncode == 0


def test_the_container_image_builds_and_runs_as_a_user() -> None:
    text = (DEPLOY / "Containerfile").read_text()
    assert "USER nomic" in text and 'VOLUME ["/config", "/data"]' in text
    assert "postgres" in (DEPLOY / "compose.yaml").read_text()
    if not _docker_works():
        pytest.skip("no working container runtime here: the image was NOT built")
    subprocess.run(
        ["docker", "build", "-f", str(DEPLOY / "Containerfile"), "-t", "nomic-referee-test", "."],
        cwd=ROOT,
        check=True,
        timeout=1800,
    )
    who = subprocess.run(
        ["docker", "run", "--rm", "--entrypoint", "id", "nomic-referee-test", "-u"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert who.stdout.strip() != "0"
    version = subprocess.run(
        ["docker", "run", "--rm", "nomic-referee-test", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert version.stdout.startswith("nomic-referee ")
