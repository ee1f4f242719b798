"""How the desk names a mail in its log: short, printable, and an address never whole (213).

`Shown` and `Redacted` are made only when a log line is written (`%s`): with logging off, or
below its level, a line costs no pass over the text (issue 19).
"""

from __future__ import annotations


def redact(address: str) -> str:
    """a***@example.org: enough to follow a log, not enough to harvest addresses."""
    local, at, domain = address.partition("@")
    return f"{local[:1]}***{at}{domain}" if at else "***"


def shown(message_id: str) -> str:
    """A Message-ID fit for one log line: printable and short."""
    if len(message_id) <= 200 and message_id.isprintable():
        return message_id  # as nearly every one is: nothing to replace, nothing to cut
    cleaned = "".join(c if c.isprintable() else "?" for c in message_id[:200])
    return cleaned + ("..." if len(message_id) > 200 else "")


class Shown:
    """`shown` of a Message-ID, made only when a log line is written."""

    __slots__ = ("message_id",)

    def __init__(self, message_id: str) -> None:
        self.message_id = message_id

    def __str__(self) -> str:
        return shown(self.message_id)


class Redacted:
    """`redact` of an address, made only when a log line is written (see `Shown`)."""

    __slots__ = ("address",)

    def __init__(self, address: str) -> None:
        self.address = address

    def __str__(self) -> str:
        return redact(self.address)
