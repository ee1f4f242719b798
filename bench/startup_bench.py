"""Benchmark: how fast the command line starts for commands that need no database (issue 19).

`--help`, `--version`, `import` and `export` read no store and send no mail, so they must not
pay for the database, the mail stack or the templates: each is timed as a fresh process (the
median of several runs) next to `python -c pass` timed the same way in the same run, the
interpreter's own start. Target: each command <= 0.3 s.

    python bench/startup_bench.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET = 0.3  # seconds

DOCUMENT = """Club laws

1. Every member may propose a change to these laws.

2. A change is adopted by a majority of the votes cast.

3. The member who first reaches 100 points wins.
"""


def timed(argv: list[str], repeat: int) -> float:
    """The median wall time of `argv` run `repeat` times, each a fresh process (a `{}` in an
    argument is the run's number: `import` never writes over the folder of an earlier run)."""
    times = []
    for run in range(repeat):
        command = [word.replace("{}", str(run)) for word in argv]
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    cli = [sys.executable, "-m", "referee"]
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        (base / "laws.txt").write_text(DOCUMENT, encoding="utf-8")
        commands = {
            "--help": [*cli, "--help"],
            "--version": [*cli, "--version"],
            "import": [*cli, "import", str(base / "laws.txt"), "--out", str(base / "laws{}")],
            "export": [*cli, "export", str(base / "laws0"), "-o", str(base / "again.md")],
        }
        bare = timed([sys.executable, "-c", "pass"], args.repeat)
        print(f"python -c pass (baseline)  : {bare:6.3f} s  median of {args.repeat}")
        for label, argv in commands.items():  # import first: export reads what it wrote
            spent = timed(argv, args.repeat)
            verdict = "meets" if spent <= TARGET else "misses"
            print(
                f"nomic-referee {label:13s}: {spent:6.3f} s  {spent / bare:5.1f}x the baseline, "
                f"+{spent - bare:.3f} s ({verdict} <= {TARGET} s)"
            )


if __name__ == "__main__":
    main()
