"""Benchmark: replay a generated 2,000-message game against a bare mailbox parse (rule 213).

Prints messages per second for `replay` (the same engine, templates and store the live service
uses) next to the time Python's `mailbox` module takes just to parse the same file, measured in
the same run, as the median of each run's ratio: the state only (target <= 3x the parse) and
every mail rendered and written (`--out`, target <= 10x). Then the same for a 20,000-message
game, to show how the cost grows.

    python bench/replay_bench.py [--messages 2000] [--large 20000] [--players 4] [--repeat 3]
"""

from __future__ import annotations

import argparse
import logging
import mailbox
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

from referee.config import load_settings
from referee.replay import replay

START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
SURNAMES = ["Bianchi", "Conti", "De Luca", "Esposito", "Ferrari", "Galli", "Greco", "Lombardi"]


def config_text(players: int) -> str:
    rows = []
    for index in range(players):
        surname = SURNAMES[index]
        rows.append(
            f'[[players]]\nname = "Player {surname}"\nemail = "p{index}@example.org"\n'
            f'surname = "{surname}"\n' + ("king = true\n" if index == 0 else "")
        )
    return (
        '[game]\nname = "Bench Nomic"\naddress = "referee@nomic.example"\nlanguage = "en"\n'
        'start = "2026-12-01T09:00:00+00:00"\n\n' + "\n".join(rows)
    )


def generate(path: Path, count: int, players: int) -> None:
    """A long game: each turn a proposal, every player votes (some twice), queries, an award."""
    box = mailbox.mbox(str(path))
    box.lock()
    at = START
    written = 0
    number = 301
    turn = 0

    def add(sender: str, body: str, step: timedelta) -> None:
        nonlocal at, written
        at += step
        message = EmailMessage()
        message["From"] = sender
        message["To"] = "referee@nomic.example"
        message["Subject"] = "move"
        message["Date"] = format_datetime(at)
        message["Message-ID"] = f"<bench-{written}@example.org>"
        message.set_content(body + "\n\n-- \nsent by the benchmark\n")
        entry = mailbox.mboxMessage(message)
        entry.set_from(sender, at.timetuple())
        box.add(entry)
        written += 1

    order = sorted(range(players), key=lambda i: SURNAMES[i])
    while written < count:
        proposer = f"p{order[turn % players]}@example.org"
        if turn % 2 == 0:  # enact a rule, then repeal it, so the cap of 210 is never reached
            add(
                proposer,
                f"PROPOSE ENACT\nRule {number}: players should be kind.\nEND",
                timedelta(hours=1),
            )
        else:
            add(proposer, f"PROPOSE REPEAL {number - 1}", timedelta(hours=1))
        for voter in range(players):
            if written >= count:
                break
            add(f"p{voter}@example.org", f"VOTE {number} NO\nSTATUS", timedelta(minutes=30))
            add(f"p{voter}@example.org", f"VOTE {number} YES", timedelta(minutes=30))
        add("stranger@example.net", "hello?", timedelta(minutes=5))
        add("p1@example.org", "RULE 202\nSCORES", timedelta(minutes=5))
        add("p0@example.org", "AWARD 1", timedelta(days=8))
        number += 1
        turn += 1
    box.flush()
    box.unlock()
    box.close()


def bare_parse(path: Path) -> tuple[float, int]:
    started = time.perf_counter()
    seen = sum(1 for _ in mailbox.mbox(str(path)))
    return time.perf_counter() - started, seen


TARGETS = {"replay (state only)": 3.0, "replay --out (renders)": 10.0}


def measure(base: Path, messages: int, players: int, repeat: int) -> None:
    """Generate a game of `messages` mails, replay it `repeat` times, print the medians."""
    mbox = base / f"game-{messages}.mbox"
    generate(mbox, messages, players)
    (base / "game.toml").write_text(config_text(players), encoding="utf-8")
    settings = load_settings(base / "game.toml")
    parse_times: list[float] = []
    times: dict[str, list[float]] = {label: [] for label in TARGETS}
    ratios: dict[str, list[float]] = {label: [] for label in TARGETS}
    for _ in range(repeat):
        seconds, seen = bare_parse(mbox)
        parse_times.append(seconds)
        started = time.perf_counter()
        result = replay(settings, mbox)
        times["replay (state only)"].append(time.perf_counter() - started)
        started = time.perf_counter()
        full = replay(settings, mbox, out=base / "sent.mbox")
        times["replay --out (renders)"].append(time.perf_counter() - started)
        assert full.state == result.state and full.sent == result.sent
        for label in TARGETS:
            ratios[label].append(times[label][-1] / seconds)
    parse_s = statistics.median(parse_times)
    print(
        f"messages: {seen} (players {players}, proposals {len(result.state.proposals)}, "
        f"mails the referee sends {result.sent}); median of {repeat}"
    )
    print(f"bare mailbox parse     : {parse_s:8.3f} s  {seen / parse_s:9.0f} msg/s  (baseline)")
    for label, target in TARGETS.items():
        spent = statistics.median(times[label])
        ratio = statistics.median(ratios[label])  # each run's ratio to its own parse
        verdict = "meets" if ratio <= target else "misses"
        print(
            f"{label:23s}: {spent:8.3f} s  {seen / spent:9.0f} msg/s  "
            f"{ratio:6.1f}x the parse ({verdict} the {target:g}x target)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--large", type=int, default=20000, help="a second, longer game (0: none)")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    logging.getLogger("referee").setLevel(logging.ERROR)  # the game's own log: not the figures
    with tempfile.TemporaryDirectory() as folder:
        measure(Path(folder), args.messages, args.players, args.repeat)
        if args.large:
            print()
            measure(Path(folder), args.large, args.players, args.repeat)


if __name__ == "__main__":
    main()
