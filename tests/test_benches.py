"""Every script in bench/ runs to its end at a small size and prints its baseline (issue 19).

A bench that no longer runs (a limit it now meets, an API it still calls the old way) fails
here, not months later on someone's machine. Each runs as a user would start it, in a fresh
process, on tiny inputs; the figures themselves are not asserted (no wall-clock assertions),
only that each bench finishes and prints its figure next to its baseline.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SMALL = {
    "archive_bench.py": ["--proposals", "30", "--rules", "12", "--git-proposals", "4"],
    "commands_bench.py": ["--repeat", "1", "--lines", "50,200", "--words", "50,100"],
    "lmtp_bench.py": ["--mails", "5", "--idle", "3"],
    "lmtp_fanout_bench.py": ["--megabytes", "0.05", "--recipients", "5", "--repeat", "1"],
    "mechanics_bench.py": ["--blocks", "5", "--repeat", "3"],
    "owners_bench.py": ["--mails", "4", "--games", "2", "--workers", "2"],
    "replay_bench.py": ["--messages", "24", "--players", "3", "--repeat", "1", "--large", "0"],
    "service_bench.py": ["all", "--votes", "3", "--burst", "12", "--backlog", "12"],
    "startup_bench.py": ["--repeat", "1"],
}

# What each bench prints beside its figure: the baseline it is measured against.
BASELINE = {
    "archive_bench.py": "baseline copy",
    "commands_bench.py": "stdlib parse",
    "lmtp_bench.py": "raw LMTP echo (baseline)",
    "lmtp_fanout_bench.py": "one recipient (baseline)",
    "mechanics_bench.py": "no blocks (baseline)",
    "owners_bench.py": "baseline",
    "replay_bench.py": "bare mailbox parse",
    "service_bench.py": "raw fetch+reply (baseline)",
    "startup_bench.py": "python -c pass (baseline)",
}


def test_every_bench_is_covered() -> None:
    scripts = {p.name for p in (ROOT / "bench").glob("*.py") if p.name != "__init__.py"}
    assert scripts == set(SMALL)


@pytest.mark.parametrize("script", sorted(SMALL))
def test_bench_runs_to_the_end(script: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *SMALL[script]],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert BASELINE[script] in done.stdout, done.stdout
