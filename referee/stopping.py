"""A stop asked for by signal before the service can act on it: `run` always ends cleanly.

SIGTERM (systemd, `docker stop`, a test) and SIGINT may come at any moment: while Python
starts, while the store opens, in the middle of a mail or a deadline. From the first line of
`run` they only set a flag; the service reads it between mails and stops once the mail in hand
is committed, with exit 0. Nothing here is a rule of the game; it serves rule 213's promise that
no mail is lost or applied twice.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

SIGNALS = (signal.SIGTERM, signal.SIGINT)

_asked = threading.Event()
_listeners: list[threading.Event] = []


def _note(signum: int, frame: FrameType | None) -> None:
    _asked.set()
    for listener in list(_listeners):
        listener.set()


def defer() -> None:
    """From now on SIGTERM and SIGINT ask for a stop instead of ending the process. Only the
    main thread may call this (as Python's `signal` requires)."""
    for sig in SIGNALS:
        signal.signal(sig, _note)


def asked() -> bool:
    """True once a stop was asked for."""
    return _asked.is_set()


def listen(event: threading.Event) -> None:
    """Set `event` when a stop is asked for (at once if it already was)."""
    _listeners.append(event)
    if _asked.is_set():
        event.set()
