"""The build warns of nothing (issue 29, item 8): a warning today is a broken build later.

setuptools warned that `project.license` as a TOML table stops working on 2027-02-18, and that
the data folders (`referee.templates.*`, `referee.ruleset.*`, `referee.archive.site_templates`)
"would be ignored" as packages left out of `packages`. The sdist and the wheel are built here as
a user's pip builds them (isolated, from a copy of the checkout), and every warning line of the
build fails the test, as do package-data files that no longer reach the wheel.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IGNORED = (".git", ".venv", "__pycache__", "*.egg-info", "build", "dist", ".*_cache", "*.db")
# setuptools' own ("WARNING ..."), distutils' ("warning: ...") and Python's ("...Warning: ...").
# PYTHONDONTWRITEBYTECODE is dropped below: it is the environment's, and makes its own warning.
WARNING = re.compile(r"^\s*(WARNING|warning:|\S*Warning:)")


def _build(tmp_path: Path) -> tuple[str, Path]:
    checkout = tmp_path / "checkout"
    shutil.copytree(ROOT, checkout, ignore=shutil.ignore_patterns(*IGNORED))
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE", "PYTHONWARNINGS")
    }
    done = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(tmp_path / "dist"), str(checkout)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    return output, next((tmp_path / "dist").glob("*.whl"))


def test_the_sdist_and_the_wheel_build_without_a_warning(tmp_path: Path) -> None:
    output, wheel = _build(tmp_path)
    lines = [line for line in output.splitlines() if WARNING.match(line)]
    assert not lines, "\n".join(lines)
    with zipfile.ZipFile(wheel) as built:
        names = set(built.namelist())
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        assert "License-Expression: MIT" in built.read(metadata).decode()
    for folder, package in (
        ("ruleset", "referee/ruleset"),
        ("templates", "referee/templates"),
        ("referee/archive/site_templates", "referee/archive/site_templates"),
    ):
        data = {
            f"{package}/{p.relative_to(ROOT / folder).as_posix()}"
            for p in (ROOT / folder).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
        }
        assert data <= names, sorted(data - names)[:5]
