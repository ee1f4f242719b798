"""Who works a game: this process's name in the lease tables, and whether another is gone (212).

One owner per game: a process holds a game by a lease on the real clock (`lease_now`), named by
host, pid and a nonce (`worker_name`); a process of this machine that no longer runs is `gone`,
and its games are taken over at once instead of after the lease runs out.
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import UTC, datetime
from pathlib import Path

from referee.store.store import DatabaseDown

LEASE_SECONDS = 6.0  # a game whose owner stops renewing is taken over after this


def worker_name() -> str:
    """This process, as the lease tables name it: host, pid, and a nonce for pid reuse."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def gone(owner: str) -> bool:
    """True when `owner` is a process of this machine that no longer runs (killed, crashed):
    its games need not wait for the lease to expire. Other machines' processes: never known."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, someone else's
        return False
    try:  # a zombie nobody reaped yet is gone too
        return "State:\tZ" in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def lease_now() -> datetime:
    """Leases always run on the real clock, whatever clock the games are played at."""
    return datetime.now(UTC)


def database_down(exc: BaseException) -> DatabaseDown:
    reason = " ".join(str(getattr(exc, "orig", None) or exc).split())[:300]
    return DatabaseDown(f"the database cannot be written or reached; the referee stops: {reason}")
