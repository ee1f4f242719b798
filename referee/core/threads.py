"""Mail threads as values: what a notice belongs to, built and parsed in one place (107, 202-214).

A proposal's circulation, reminders, result and debate share the thread `proposal-301`; the
King's prompts have their own: `award-301` (202), `parameters-202-305` (111, 211), `appeal-A1`
(212, 213), `tie` (209); debate said outside any proposal goes to `table` (112); the records of
rule 205 (the opening ruleset, every ruleset and scores mail) share one thread per game,
`ruleset`; the referee's answer to a mail is `answer-<token>` (`confirm-<token>` when it asks
for a bare yes), so that an APPEAL in reply names the decision (212). The mail layer writes a
thread into Message-IDs and reads it back from a reply's
In-Reply-To or References; both go through `Thread.name` and `Thread.parse`.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from referee.core import numerals


class ThreadKind(enum.StrEnum):
    PROPOSAL = "proposal"  # 107, 112, 203
    AWARD = "award"  # 202 (4): the King's points
    PARAMETERS = "parameters"  # 111, 211: the King confirms a rule's parameters
    APPEAL = "appeal"  # 212, 213: the appeal, its Champion, its ruling, the crown
    TIE = "tie"  # 209: the King names the winner
    TABLE = "table"  # 112: debate said to the table outside any proposal (SAY)
    CONFIRM = "confirm"  # a reply asking the player to confirm what a line seemed to mean
    RULESET = "ruleset"  # 205: the ruleset and the scores, one thread per game
    JOIN = "join"  # the King answers request N to join
    VERIFY = "verify"  # an address confirms a request to join or to move (the mail layer)
    ANSWER = "answer"  # the referee's answer to a player's mail: an APPEAL in reply is about it


_PROMPTS = (
    ThreadKind.AWARD,
    ThreadKind.PARAMETERS,
    ThreadKind.APPEAL,
    ThreadKind.TIE,
    ThreadKind.JOIN,
)
_NAME = re.compile(
    r"(proposal|award|parameters|appeal|join|verify|answer|confirm)-([a-z0-9]+(?:-[a-z0-9]+)?)"
    r"|(tie|table|confirm|ruleset)"
)


@dataclass(frozen=True)
class Thread:
    """One thread of a game's mail: a kind and what it is about."""

    kind: ThreadKind
    key: str = ""  # "301", "A1", "202-305"; empty for the tie and the ruleset

    @classmethod
    def proposal(cls, number: int) -> Thread:
        return cls(ThreadKind.PROPOSAL, str(number))

    @classmethod
    def award(cls, number: int | None) -> Thread:
        return cls(ThreadKind.AWARD, str(number or 0))

    @classmethod
    def parameters(cls, rule: int, proposal: int) -> Thread:
        return cls(ThreadKind.PARAMETERS, f"{rule}-{proposal}")

    @classmethod
    def appeal(cls, appeal_id: str) -> Thread:
        return cls(ThreadKind.APPEAL, appeal_id.upper())

    @classmethod
    def join(cls, request: int) -> Thread:
        return cls(ThreadKind.JOIN, str(request))

    @classmethod
    def verify(cls, token: str) -> Thread:
        return cls(ThreadKind.VERIFY, token.lower())

    @classmethod
    def tie(cls) -> Thread:
        return cls(ThreadKind.TIE)

    @classmethod
    def table(cls) -> Thread:
        return cls(ThreadKind.TABLE)

    @classmethod
    def confirm(cls, token: str = "") -> Thread:
        return cls(ThreadKind.CONFIRM, token.lower())

    @classmethod
    def answer(cls, token: str) -> Thread:
        return cls(ThreadKind.ANSWER, token.lower())

    @classmethod
    def ruleset(cls) -> Thread:
        return cls(ThreadKind.RULESET)

    @property
    def name(self) -> str:
        """The thread's name as it appears in Message-IDs: `award-301`, `appeal-a1`, `tie`."""
        return self.kind.value if not self.key else f"{self.kind.value}-{self.key.lower()}"

    @property
    def prompt(self) -> bool:
        """A thread in which the King's (or deposed King's) bare reply is an answer."""
        return self.kind in _PROMPTS

    @property
    def number(self) -> int | None:
        """The proposal (award, proposal) or the rule identity (parameters) it is about."""
        head = self.key.split("-")[0]
        return numerals.number(head)

    @property
    def proposal_number(self) -> int | None:
        """The proposal of a parameters thread (`parameters-<rule>-<proposal>`)."""
        tail = self.key.rpartition("-")[2]
        return numerals.number(tail) if self.kind is ThreadKind.PARAMETERS else None

    @classmethod
    def parse(cls, name: str) -> Thread | None:
        found = _NAME.fullmatch(name.strip().lower())
        if found is None:
            return None
        if found.group(3):
            return cls(ThreadKind(found.group(3)))
        kind = ThreadKind(found.group(1))
        key = found.group(2).upper() if kind is ThreadKind.APPEAL else found.group(2)
        return cls(kind, key)

    def __str__(self) -> str:
        return self.name
