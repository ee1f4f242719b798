"""What deciding a mail needs of the store, read before deciding (201, 212).

The desk's `look_up` stage reads it once, so that deciding has no store access: the decision
of the answer an APPEAL replies to, and, for a request to join or to move, the day's requests
to join so far and the addresses that already wait for a confirmation.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime

from referee.config import Settings
from referee.core.events import AskToJoin, Command, MoveAddress, OpenAppeal
from referee.core.model import Decided
from referee.desk import appeals
from referee.mail.parse import InboundMail
from referee.store.store import UnitOfWork


@dataclass(frozen=True)
class Known:
    """What deciding a mail needs of the store, read before deciding."""

    answered: Decided | None = None  # the decision of the answer the mail replies to
    joins_today: int = 0  # the day's requests to join, before this mail's
    waiting: frozenset[str] = frozenset()  # addresses asked of that wait for a confirmation

    def about(self, appeal: OpenAppeal) -> OpenAppeal:
        """The appeal, about the decision of the answer it replies to (none: unchanged)."""
        return appeal if self.answered is None else replace(appeal, about=self.answered)


def asked_of(command: AskToJoin | MoveAddress) -> str:
    """The address a request to join or to move must be confirmed by."""
    return command.new if isinstance(command, MoveAddress) else command.sender


def look_up(
    settings: Settings,
    work: UnitOfWork,
    mail: InboundMail,
    at: datetime,
    commands: Iterable[Command | None],
) -> Known:
    """What deciding `commands` needs: the answer replied to, when one is an APPEAL; the
    day's joins and the waiting requests, when one is a request to join or to move."""
    listed = list(commands)
    answered = None
    if any(isinstance(command, OpenAppeal) for command in listed):
        answered = appeals.answered(settings, work, mail)
    requests = [c for c in listed if isinstance(c, AskToJoin | MoveAddress)]
    if not requests:
        return Known(answered=answered)
    joins = work.joins_today(at.date().isoformat())
    addresses = {asked_of(request) for request in requests}
    waiting = frozenset(a for a in addresses if work.pending(at, address=a) is not None)
    return Known(answered=answered, joins_today=joins, waiting=waiting)
