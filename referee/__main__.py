"""`nomic-referee` and `python -m referee`: start the command line (INTERFACE.md section 1).

The command line's imports (the database, the mail stack) take a moment; a Ctrl-C during them
gets the same one line as a Ctrl-C later, not a traceback. For `run`, SIGTERM and SIGINT ask
for a clean stop from the first line on (`referee.stopping`).
"""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:2] == ["run"]:  # the service: a SIGTERM while it starts is a clean stop too
        from referee import stopping

        stopping.defer()
    try:
        from referee.cli import main as command_line
    except KeyboardInterrupt:
        sys.stderr.write("nomic-referee: interrupted\n")
        sys.exit(130)
    command_line()


if __name__ == "__main__":
    main()
