"""A progress bar for the long builds of the archive and the site, on a terminal only (205).

Rebuilding an Agora-sized record takes minutes; an operator at a terminal sees how far it has
got. Under `run`, in a pipe or in the tests nothing is drawn.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

WORTH_SHOWING = 200  # steps; fewer end before a bar would help


@contextmanager
def progress_bar(label: str, total: int, wanted: bool) -> Iterator[Callable[[], None]]:
    """Yields the function to call after each step; draws a bar when it is worth it."""
    if not (wanted and total > WORTH_SHOWING and sys.stderr.isatty()):
        yield lambda: None
        return
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda: bar.advance(task)
