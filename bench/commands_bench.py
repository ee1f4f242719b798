"""Benchmark: reading commands is linear in the size of a mail (issue 7; rules 103-215).

For mails of 1,000 to 15,000 distinct `VOTE` lines, prints the time to read the commands
(parse, strip quotes, parse commands) next to the time the stdlib email parser alone takes on
the same bytes, measured in the same run, and the growth from one size to the next (linear:
about 4x for 4x the lines). Then one long line of words, where the quote stripper is compared
with the reply-parsing library it was evaluated against (mail-parser-reply), whose whole-text
regular expressions grow quadratically.

    python bench/commands_bench.py [--repeat 3] [--lines 1000,4000,15000] [--words 1250,2500,5000]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from email import policy
from email.parser import BytesParser

from mailparser_reply import EmailReplyParser

from referee.mail.commands import parse_commands
from referee.mail.parse import parse_message
from referee.mail.quotes import strip_reply


def mail(lines: int) -> bytes:
    body = "\r\n".join(f"VOTE {301 + i} YES" for i in range(lines))
    head = (
        "From: Bob Rossi <bob@example.org>\r\nTo: referee@nomic.example\r\nSubject: votes\r\n"
        "Message-ID: <bench@example.org>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n"
    )
    return (head + body + "\r\n").encode()


def best(work: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def read(raw: bytes) -> None:
    parsed = parse_message(raw)
    parse_commands(parsed.sender, parsed.subject, parsed.own_words)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--lines", default="1000,4000,15000", help="mail sizes, in VOTE lines")
    parser.add_argument("--words", default="1250,2500,5000", help="long-line sizes, in words")
    args = parser.parse_args()
    sizes = [int(n) for n in args.lines.split(",")]
    long_lines = [int(n) for n in args.words.split(",")]
    stdlib = BytesParser(policy=policy.compat32)
    print(f"{'lines':>7} {'commands ms':>12} {'stdlib parse ms':>16} {'us/line':>8} {'growth':>7}")
    previous = None
    for lines in sizes:
        raw = mail(lines)
        ours = best(lambda raw=raw: read(raw), args.repeat)  # type: ignore[misc]
        base = best(lambda raw=raw: stdlib.parsebytes(raw), args.repeat)  # type: ignore[misc]
        growth = f"{ours / previous:.1f}x" if previous else "-"
        per_line = ours / lines * 1e6
        print(f"{lines:>7} {ours * 1e3:>12.1f} {base * 1e3:>16.2f} {per_line:>8.1f} {growth:>7}")
        previous = ours
    library = EmailReplyParser(languages=["en", "it", "de", "fr", "es", "nl"])
    print(f"\n{'words in one line':>17} {'strip_reply ms':>15} {'mail-parser-reply ms':>21}")
    for words in long_lines:
        text = "On " + "x " * words + "\nVOTE 301 YES\n"
        ours = best(lambda text=text: strip_reply(text), args.repeat)  # type: ignore[misc]
        theirs = best(lambda text=text: library.parse_reply(text), 1)  # type: ignore[misc]
        print(f"{words:>17} {ours * 1e3:>15.3f} {theirs * 1e3:>21.1f}")


if __name__ == "__main__":
    main()
