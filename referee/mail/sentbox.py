"""The `sent` Maildir: where a game without [smtp] keeps what the referee sends (107, 205).

Opened (its new/, cur/ and tmp/ made) for the postman that writes it (`referee.delivery.sentbox`),
and read back for listings by each mail's Subject. This module knows nothing of the outbox.
"""

from __future__ import annotations

import mailbox
from email.header import decode_header, make_header
from email.parser import BytesHeaderParser
from email.policy import compat32
from pathlib import Path

from referee.mail.maildir import make_maildir


def subject_of(raw: bytes) -> str:
    """The decoded Subject of a mail the referee wrote, for listings (`outbox`, `demo`)."""
    value = str(BytesHeaderParser(policy=compat32).parsebytes(raw).get("Subject", ""))
    try:
        return str(make_header(decode_header(value)))
    except (ValueError, LookupError):  # a header no charset decodes: show it as it is
        return value


def open_sent(path: Path) -> mailbox.Maildir:
    """The sent Maildir, with new/, cur/ and tmp/ made when missing (mode 0700)."""
    return mailbox.Maildir(str(make_maildir(path)), create=True)
