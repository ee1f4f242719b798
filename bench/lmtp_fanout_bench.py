"""Benchmark of one mail to many of a game's addresses over LMTP (issue 28 item 9; rule 107).

The figure: the game's time to settle a stranger's large mail handed over once for 100
recipients (`referee+1@` ... `referee+100@`), next to the same mail for one recipient (the
baseline). A real LMTP server (`lmtp.listen`) in front of a real game (`Referee.receive`, on
SQLite), a real LMTP client; each mail has a Message-ID of its own. Target: 100 recipients
cost at most 1.5x one (the game reads the mail once, then answers every recipient).

    python bench/lmtp_fanout_bench.py [--megabytes 4.4] [--recipients 100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers import T0, mail  # noqa: E402
from tests.sink import lmtp_deliver  # noqa: E402
from tests.test_lmtp_fanout import GameDesk, game, serving  # noqa: E402


def timed(port: int, raw: bytes, recipients: list[str]) -> float:
    started = time.perf_counter()
    answers = lmtp_deliver(port, raw, recipients)
    elapsed = time.perf_counter() - started
    assert [code for code, _ in answers] == [250] * len(recipients), answers[:3]
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=4.4)
    parser.add_argument("--recipients", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    logging.getLogger("referee").setLevel(logging.ERROR)
    line = "a stranger's words, long enough to weigh what a large mail weighs\n"
    body = line * max(1, int(args.megabytes * 1_000_000 / len(line)))
    many = [f"referee+{n}@nomic.example" for n in range(1, args.recipients + 1)]
    with tempfile.TemporaryDirectory() as folder:
        desk = GameDesk(game(Path(folder)), T0)
        with serving(desk) as port:
            one, fanned = [], []
            for _ in range(args.repeat):
                one.append(timed(port, mail("mallory@evil.example", body), many[:1]))
                fanned.append(timed(port, mail("mallory@evil.example", body), many))
    size = len(body) / 1_000_000
    first, second = statistics.median(one), statistics.median(fanned)
    print(f"mail of {size:.1f} MB, median of {args.repeat} hand-overs of each")
    print(f"  one recipient (baseline)   {first:8.3f} s")
    print(
        f"  {args.recipients:>3} recipients             {second:8.3f} s   ({second / first:.2f}x)"
    )
    print(f"  takes by the game: {desk.taken} for {2 * args.repeat} mails")


if __name__ == "__main__":
    main()
