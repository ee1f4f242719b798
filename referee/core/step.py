"""One event's worth of changes: the step context every concern of the engine works on.

`Step` holds the state, the time of the event, the effects said so far and the changes to the
rules and scores gathered for the one ruleset mail of rule 205. `Refusal` unwinds a handler that
refuses; `Decision` is what `decide` returns. Also `find_player` (201: players by name) and
`day_start` (the UTC day the daily limits count by, 212, 213).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from referee.core import mechanics, notices, outcomes, params, view
from referee.core.changes import (
    Changes,
    RuleChange,
    ScoreChange,
    changes_data,
)
from referee.core.events import (
    EVERYONE,
    Effect,
    Notice,
    Reason,
)
from referee.core.model import (
    GameState,
    Player,
    ProposalKind,
    replace,
)
from referee.core.order import collation_key
from referee.core.threads import Thread

DAY = timedelta(days=1)


def day_start(at: datetime) -> datetime:
    """Midnight UTC at the start of the day of `at`: the day the daily limits count by."""
    day = at.astimezone(UTC).date()
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


AMENDING_KINDS = (
    ProposalKind.AMEND,
    ProposalKind.ENACT_AMENDMENT,
    ProposalKind.AMEND_AMENDMENT,
    ProposalKind.REPEAL_AMENDMENT,
)


@dataclass(frozen=True)
class Decision:
    state: GameState
    effects: tuple[Effect, ...]


class Refusal(Exception):
    """Internal: unwinds a handler that refuses; turned into an Outcome before returning."""

    def __init__(self, payload: outcomes.Refused) -> None:
        super().__init__(payload.code.value)
        self.payload = payload

    @property
    def reason(self) -> Reason:
        return self.payload.code


def find_player(state: GameState, who: str) -> Player | None:
    """A player by email, full name, surname or first name (case and accents ignored)."""
    wanted = who.strip().strip("<>").casefold()
    for p in state.players:
        if p.email == wanted:
            return p
    key = collation_key(who)
    if not key:
        return None
    for attr in ("name", "surname"):
        matches = [p for p in state.players if collation_key(getattr(p, attr)) == key]
        if len(matches) == 1:
            return matches[0]
    firsts = [p for p in state.players if collation_key(p.name.split()[0]) == key]
    return firsts[0] if len(firsts) == 1 else None


class Step:
    """The context of one event: state in, effects and changes out."""

    def __init__(self, state: GameState, now: datetime) -> None:
        self.state = state
        self.now = now
        self.effects: list[Effect] = []
        self.changes = Changes()
        # issue 26: who a rule's WIN named after the blocks' effects of this step (rule, email)
        self.block_winners: tuple[tuple[int, str], ...] = ()

    def notify(
        self, to: tuple[str, ...], payload: notices.NoticePayload, thread: Thread | None = None
    ) -> None:
        if to:
            self.effects.append(Notice(to, payload, thread, mechanics.citations(self.state)))

    def to_king(self) -> tuple[str, ...]:
        return (self.state.king,) if self.state.king else ()

    def params(self) -> dict[str, int]:
        return params.effective(self.state)

    def record(self, change: RuleChange | ScoreChange) -> None:
        """205: a change to the rules or the scores, for the step's one ruleset mail."""
        self.changes = self.changes.plus(change)

    def publish_changes(self) -> None:
        """205: after every change, the ruleset and the scores, opening with what changed.

        A step that changed the rules sends the full ruleset and scores, in the game's ruleset
        thread. A step that changed the scores alone sends the scores and what changed: inside
        the mail that already goes to everyone in this step (the next turn, the winner), else
        as a scores mail of its own in the same thread. Never the same ruleset twice a turn.
        """
        if not self.changes:
            return
        data = changes_data(self.changes, self.state.current_number)
        self.changes = Changes()
        if data["rules"]:
            self.notify(
                EVERYONE,
                notices.Ruleset(data, **view.ruleset_data(self.state)),
                Thread.ruleset(),
            )
            return
        scores = view.scores_data(self.state)
        for index, effect in enumerate(self.effects):
            if not isinstance(effect, Notice) or effect.to != EVERYONE:
                continue
            payload = effect.payload
            if isinstance(payload, notices.TurnStarted):
                folded: notices.NoticePayload = replace(payload, changes=data, scores=scores)
            elif isinstance(payload, notices.Winner):
                folded = replace(payload, changes=data, scores=scores)
            else:
                continue
            self.effects[index] = replace(effect, payload=folded)
            return
        self.notify(
            EVERYONE,
            notices.Scores(
                changes=data,
                scores=scores,
                king=self.name_of(self.state.king),
                winning_score=self.params()["winning_score"],
            ),
            Thread.ruleset(),
        )

    def name_of(self, email: str | None) -> str:
        if email is None:
            return ""
        p = self.state.player(email)
        return p.name if p else email

    def resolve(self, who: str) -> Player:
        p = find_player(self.state, who)
        if p is None:
            raise Refusal(outcomes.UnknownPlayer(who=who))
        if not p.active:  # 114: known, but gone
            raise Refusal(outcomes.PlayerLeft(who=p.name))
        return p
