"""What `verify` finds (213): the verdict, the first divergence, and what the replay made.

`Verdict` is the report `nomic-referee verify` prints (or gives as JSON); `Replayed` is what
the replay of the mail given recorded, which the database's and the sent mail's checks hold
their record against.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from referee.core import chain

if TYPE_CHECKING:
    from referee.service import Referee
    from referee.store.store import Store


@dataclass(frozen=True)
class Divergence:
    """The first place where what was published or stored is not what the rules give."""

    where: str
    what: str
    published: str = ""
    rules_give: str = ""
    # What `published` and `rules_give` are, as the report names them: a stored message that
    # differs from the mail given is the database's copy against the file's, not a decision
    labels: tuple[str, str] = ("published", "the rules give")


@dataclass
class Verdict:
    ok: bool = True
    messages: int = 0
    links: int = 0
    head: str = chain.GENESIS
    database_links: int = 0  # links of the database's chain checked (0: no database at hand)
    sent_checked: int = 0
    signatures_checked: int = 0  # DKIM signatures of the sent mail that verified (213)
    sent_missing: int = 0  # mails the rules make that the sent mail given does not hold
    withheld: int = 0  # mails of people not playing, given as stand-ins: their text unchecked
    last_link: int = 0  # the number of the record's last link (0: none), whose head is `head`
    sent_after_record: int = 0  # sent mail of links after the record's last: not checked
    sent_answers_withheld: int = 0  # sent mail answering a withheld mail: not made, not checked
    divergence: Divergence | None = None
    notes: list[str] = field(default_factory=list)

    def fail(self, divergence: Divergence) -> Verdict:
        if self.divergence is None:
            self.ok, self.divergence = False, divergence
        return self

    def as_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, indent=2)


@dataclass
class Replayed:
    links: list[tuple[int, str, datetime, bytes | None, str, str]] = field(default_factory=list)
    outbox: dict[str, bytes] = field(default_factory=dict)
    players: set[str] = field(default_factory=set)  # every address that played, at the end
    # Each inbound mail as the replay records it (`Store.inbound_rows`)
    inbound: list[tuple[str, str, str, datetime, int]] = field(default_factory=list)
    # Each event's sequence, time and the Message-ID of its mail, as the replay logs them
    events: list[tuple[int, datetime, str | None]] = field(default_factory=list)
    # Answers to mail that could not be read, which the mail given does not make (that mail is
    # in no link, so not in an export): by Message-ID, from the database's outbox
    unread_answers: set[str] = field(default_factory=set)

    def keep(self, store: Store, referee: Referee) -> None:
        """What the replay's own store holds once every mail is in (`replay`'s `inspect`)."""
        self.links = [
            (r.seq, r.kind, r.at, r.raw, r.record, r.head) for r in store.chain(referee.game_id)
        ]
        self.outbox = {r.message_id: r.raw for r in store.outbox(referee.game_id)}
        self.players = {p.email for p in referee.state.players}
        self.events = [(q, at, mid) for q, at, mid, _ in store.event_log(referee.game_id)]
        self.inbound = store.inbound_rows(referee.game_id)


UNREAD_KINDS = ("unreadable", "unreadable_note")  # the outbox kinds of those answers


# What a check with neither the database nor the sent mail can show, said in its notes (and so
# in --json): that the mail given makes the head it names, not that the head is the game's.
UNCHECKED = (
    "nothing to hold it against: neither the database nor the referee's sent mail was given, "
    "so this shows only that the mail given makes the head above; it is the game's mail when "
    "that head is the one in the X-Nomic-Chain header of the referee's mail you hold "
    "(or give --sent)"
)
