"""Appeals, Champions, rulings, accusations, deposition and the crown (212, 213, 214, 215).

An appeal is to the King in office (212, 214); when he is a party, or for an accusation (213),
a Champion he names judges. A ruling is settled by a majority's agreement; an upheld accusation
deposes the King, who crowns a successor, or after `crown_days` the crown passes on. 215: a
ruling that play cannot continue names the winner.

212 lets any player appeal but no one hold the game with hundreds of appeals: one beyond its
sender's daily limit waits (`WaitingAppeal`) and opens at the turn of a UTC day, in the order
the waiting ones came, each counting against that day's limit (`open_waiting`, on the clock's
Tick); one the rules no longer allow then is not opened, and its sender is told why.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from referee.core import mechanics, notices, outcomes, params, procedure, rulings, view
from referee.core.adoption import prompt_parameters
from referee.core.changes import (
    ScoreCause,
    ScoreChange,
)
from referee.core.events import (
    EVERYONE,
    Accuse,
    Agree,
    Crown,
    GiveRuling,
    NameChampion,
    OpenAppeal,
)
from referee.core.model import (
    Appeal,
    AppealKind,
    AppealStatus,
    Decided,
    GameState,
    Phase,
    RequestStatus,
    Verdict,
    WaitingAppeal,
    replace,
)
from referee.core.roster import prompt_join
from referee.core.step import DAY, Refusal, Step, day_start
from referee.core.threads import Thread
from referee.core.turns import (
    finish,
    next_turn_or_hold,
    player_after,
    prompt_award,
    prompt_tie,
    settle_tie,
)


def crown_due(state: GameState) -> datetime:
    """213, 214: when the crown passes on if the deposed King has not chosen a successor."""
    assert state.deposed_at is not None
    return state.deposed_at + timedelta(days=params.effective(state)["crown_days"])


def open_appeal(step: Step, cmd: OpenAppeal) -> outcomes.Accepted:
    question = cmd.question.strip()
    if not question:
        raise Refusal(outcomes.EmptyText())
    if must_wait(step, cmd.sender, cmd.per_day):
        entry = _waiting(step, AppealKind.APPEAL, cmd.sender, question, cmd.per_day, cmd.about)
        return wait(step, entry, cmd.may_wait)
    appeal = file_appeal(step, AppealKind.APPEAL, cmd.sender, question, about=cmd.about)
    judge = step.state.judge_of(appeal)
    return outcomes.AppealOpened(id=appeal.id, judge=step.name_of(judge))


def accuse(step: Step, cmd: Accuse) -> outcomes.Accepted:
    king = step.state.king
    evidence = cmd.evidence.strip()
    if not evidence:
        raise Refusal(outcomes.EmptyText())
    if must_wait(step, cmd.sender, cmd.per_day):
        entry = _waiting(step, AppealKind.ACCUSATION, cmd.sender, evidence, cmd.per_day)
        return wait(step, replace(entry, accused=king), cmd.may_wait)
    appeal = file_appeal(step, AppealKind.ACCUSATION, cmd.sender, evidence, accused=king)
    return outcomes.AccusationOpened(id=appeal.id)


# ----- the daily limit: appeals that wait for the next day (212) ---------------------------


def must_wait(step: Step, appellant: str, per_day: int) -> bool:
    """Whether an appeal sent now waits: its sender opened `per_day` today, or some of his
    wait already (they open first: the order they came in). `per_day` 0: no limit."""
    if per_day <= 0:
        return False
    today = opened_since(step.state, appellant, day_start(step.now))
    return bool(step.state.waiting_of(appellant)) or today >= per_day


def _waiting(
    step: Step,
    kind: AppealKind,
    appellant: str,
    question: str,
    per_day: int,
    about: Decided | None = None,
) -> WaitingAppeal:
    """The appeal as it waits; `opens_at` is set by `wait`."""
    return WaitingAppeal(kind, appellant, question, step.now, step.now, per_day, about)


def wait(step: Step, entry: WaitingAppeal, may_wait: int) -> outcomes.Accepted:
    """Put the appeal at the end of the line, on the first day after today that has room for
    one more of its sender's (`per_day` a day); refused when `may_wait` of his wait already."""
    mine = step.state.waiting_of(entry.appellant)
    tomorrow = day_start(step.now) + DAY
    if len(mine) >= may_wait:
        first = mine[0].opens_at if mine else tomorrow
        raise Refusal(outcomes.AppealsDailyLimit(limit=entry.per_day, waiting=may_wait, next=first))
    opens = max(tomorrow, mine[-1].opens_at) if mine else tomorrow
    while sum(1 for w in mine if w.opens_at == opens) >= entry.per_day:
        opens += DAY
    queued = replace(entry, opens_at=opens)
    step.state = replace(step.state, waiting_appeals=(*step.state.waiting_appeals, queued))
    return outcomes.AppealWaiting(
        accusation=entry.kind is AppealKind.ACCUSATION,
        limit=entry.per_day,
        position=len(mine) + 1,
        opens=opens,
    )


def open_waiting(step: Step) -> None:
    """212, on the clock's Tick: the appeals whose day has come open, in the order they came,
    each counting against today's limit of its sender (one past it waits for the next day).
    One the rules no longer allow (the game is over, the sender left, no rule in force grants
    appeals, an accusation's King no longer reigns) is not opened: its sender is told why."""
    if not any(w.opens_at <= step.now for w in step.state.waiting_appeals):
        return
    today = day_start(step.now)
    kept: list[WaitingAppeal] = []
    held: set[str] = set()  # senders whose day is full: their later ones wait too (order)
    for entry in step.state.waiting_appeals:
        if entry.opens_at > step.now:
            kept.append(entry)
            continue
        refused = barred(step.state, entry)
        if refused is not None:
            step.notify(
                (entry.appellant,),
                notices.AppealDropped(
                    accusation=entry.kind is AppealKind.ACCUSATION,
                    question=entry.question,
                    asked=entry.asked_at,
                    reason={"code": refused.code.value, "data": refused.fields()},
                ),
            )
            continue
        full = opened_since(step.state, entry.appellant, today) >= entry.per_day
        if entry.appellant in held or full:
            held.add(entry.appellant)
            kept.append(replace(entry, opens_at=today + DAY))
            continue
        file_appeal(
            step,
            entry.kind,
            entry.appellant,
            entry.question,
            accused=entry.accused,
            about=entry.about,
            asked_at=entry.asked_at,
        )
    step.state = replace(step.state, waiting_appeals=tuple(kept))


def barred(state: GameState, entry: WaitingAppeal) -> outcomes.Refused | None:
    """Why a waiting appeal may not open now: the gate of APPEAL or ACCUSE, as if sent now;
    and an accusation is of the King it named, who must still reign (213)."""
    accusing = entry.kind is AppealKind.ACCUSATION
    command = (
        Accuse(entry.appellant, entry.question)
        if accusing
        else OpenAppeal(entry.appellant, entry.question, entry.about)
    )
    refused = procedure.bar(state, command)
    gone = accusing and state.king != entry.accused
    if gone and (refused is None or refused.code in _KING_GONE):
        accused = state.player(entry.accused or "")
        return outcomes.AccusedNotKing(accused=accused.name if accused else "")
    return refused


# No King, or the accuser now King: said as "the King you accused no longer reigns".
_KING_GONE = (outcomes.Reason.NO_KING, outcomes.Reason.KING_CANNOT_ACCUSE)


def withdraw_waiting(step: Step, email: str) -> int:
    """114: who leaves takes his waiting appeals with him; how many there were."""
    mine = step.state.waiting_of(email)
    if mine:
        rest = tuple(w for w in step.state.waiting_appeals if w.appellant != email)
        step.state = replace(step.state, waiting_appeals=rest)
    return len(mine)


def file_appeal(
    step: Step,
    kind: AppealKind,
    appellant: str,
    question: str,
    accused: str | None = None,
    about: Decided | None = None,
    asked_at: datetime | None = None,
) -> Appeal:
    """Number it (A1, A2, ...), tell everyone, and ask the King for a Champion if needed;
    an appeal about a decision of the referee's puts its facts and a draft to the judge.
    `asked_at`: when it was sent, if it waited for a day of its sender's limit."""
    appeal = Appeal(
        id=f"A{len(step.state.appeals) + 1}",
        kind=kind,
        appellant=appellant,
        question=question,
        opened_at=step.now,
        accused=accused,
        asked_at=asked_at,
    )
    if about is not None:
        appeal = rulings.file_about(appeal, about)
    step.state = step.state.with_appeal(appeal)
    step.notify(
        EVERYONE,
        notices.AppealOpened(view.appeal_data(step.state, appeal)),
        thread=Thread.appeal(appeal.id),
    )
    if step.state.judge_of(appeal) is None:
        prompt_champion(step, appeal)
    else:
        rulings.prompt_judge(step, appeal)
    return appeal


def prompt_champion(step: Step, appeal: Appeal) -> None:
    step.notify(
        step.to_king(),
        notices.ChampionPrompt(view.appeal_data(step.state, appeal)),
        thread=Thread.appeal(appeal.id),
    )


def open_appeal_for(step: Step, appeal_id: str) -> Appeal:
    appeal = step.state.appeal(appeal_id)
    if appeal is None:
        raise Refusal(outcomes.UnknownAppeal(id=appeal_id.upper()))
    if appeal.status is not AppealStatus.OPEN:
        raise Refusal(outcomes.AppealSettled(id=appeal.id))
    return appeal


def opened_since(state: GameState, appellant: str, since: datetime) -> int:
    """How many appeals and accusations this player opened from `since` on (the daily limit,
    so that no one holds the game with hundreds of appeals: 212)."""
    return sum(1 for a in state.appeals if a.appellant == appellant and a.opened_at >= since)


def name_champion(step: Step, cmd: NameChampion) -> outcomes.Accepted:
    appeal = open_appeal_for(step, cmd.appeal)
    judge = step.state.judge_of(appeal)
    if judge is not None:
        raise Refusal(outcomes.JudgeAlreadyNamed(id=appeal.id, judge=step.name_of(judge)))
    champion = step.resolve(cmd.who)
    if champion.email == step.state.king:  # 212: the King cannot judge his own appeal
        raise Refusal(outcomes.KingCannotJudge(id=appeal.id))
    named = replace(appeal, champion=champion.email)
    step.state = step.state.with_appeal(named)
    step.notify(
        EVERYONE,
        notices.ChampionNamed(view.appeal_data(step.state, named)),
        thread=Thread.appeal(appeal.id),
    )
    rulings.prompt_judge(step, named)
    return outcomes.ChampionNamed(id=appeal.id, champion=champion.name)


def give_ruling(step: Step, cmd: GiveRuling) -> outcomes.Accepted:
    appeal = open_appeal_for(step, cmd.appeal)
    text = cmd.text.strip()
    if not text:
        raise Refusal(outcomes.EmptyText())
    verdict = Verdict(cmd.verdict) if cmd.verdict else None
    if appeal.kind is AppealKind.ACCUSATION and verdict is None:
        raise Refusal(outcomes.VerdictNeeded(id=appeal.id))
    if cmd.impossible and not mechanics.runs(step.state, mechanics.Mechanic.IMPOSSIBLE):
        raise Refusal(outcomes.NotInForce(mechanic=mechanics.Mechanic.IMPOSSIBLE.value))
    impossible = step.resolve(cmd.impossible).email if cmd.impossible else None
    ruled = replace(
        appeal,
        ruling=text,
        verdict=verdict,
        impossible=impossible,
        rulings=appeal.rulings + 1,
        agree=(),
        disagree=(),
    )
    step.state = step.state.with_appeal(ruled)
    step.notify(
        EVERYONE,
        notices.RulingPublished(view.appeal_data(step.state, ruled)),
        thread=Thread.appeal(appeal.id),
    )
    return outcomes.RulingPublished(id=appeal.id)


def agree(step: Step, cmd: Agree) -> outcomes.Accepted:
    appeal = open_appeal_for(step, cmd.appeal)
    if appeal.ruling is None:
        raise Refusal(outcomes.NoRulingYet(id=appeal.id))
    agree = tuple(a for a in appeal.agree if a != cmd.sender)
    disagree = tuple(a for a in appeal.disagree if a != cmd.sender)
    if cmd.agree:
        agree = (*agree, cmd.sender)
    else:
        disagree = (*disagree, cmd.sender)
    step.state = step.state.with_appeal(replace(appeal, agree=agree, disagree=disagree))
    weigh(step, appeal.id)
    return outcomes.AgreementRecorded(id=appeal.id, agree=cmd.agree)


def weigh(step: Step, appeal_id: str) -> None:
    """212: settled once a majority of players approves the latest ruling."""
    appeal = step.state.appeal(appeal_id)
    if appeal is None or appeal.status is not AppealStatus.OPEN or appeal.ruling is None:
        return
    active = {p.email for p in step.state.active_players}
    agree = len(active & set(appeal.agree))
    disagree = len(active & set(appeal.disagree))
    if agree * 2 > len(active):
        settled = replace(appeal, status=AppealStatus.SETTLED)
        step.state = step.state.with_appeal(settled)
        step.notify(
            EVERYONE,
            notices.AppealSettled(view.appeal_data(step.state, settled)),
            thread=Thread.appeal(appeal.id),
        )
        carry_out(step, settled)
    elif disagree * 2 > len(active) and disagree == len(appeal.disagree):
        step.notify(
            EVERYONE,
            notices.RulingFailed(view.appeal_data(step.state, appeal)),
            thread=Thread.appeal(appeal.id),
        )


def carry_out(step: Step, appeal: Appeal) -> None:
    rulings.mark_due(step, appeal)  # 212, 108: a correction, carried out by `machine.command`
    ending = mechanics.runs(step.state, mechanics.Mechanic.IMPOSSIBLE)
    if appeal.impossible is not None and ending:  # 215: the first unable to move wins
        finish(step, appeal.impossible, "impossible")
        return
    deposing = mechanics.runs(step.state, mechanics.Mechanic.DEPOSITION)
    if appeal.kind is AppealKind.ACCUSATION and appeal.verdict is Verdict.UPHELD and deposing:
        depose(step, appeal)
    if step.state.phase is Phase.APPEAL and not step.state.open_appeals:
        next_turn_or_hold(step)


def depose(step: Step, appeal: Appeal) -> None:
    """213: the King becomes a subject, loses points, and chooses the new King."""
    old = step.state.player(appeal.accused or "")
    if old is None or step.state.king != old.email:
        return
    penalty = step.params()["deposition_penalty"]
    step.state = replace(
        step.state.with_player(replace(old, score=old.score - penalty)),
        king=None,
        deposed=old.email,
    )
    step.notify(
        EVERYONE,
        notices.KingDeposed(king=old.name, penalty=penalty, appeal=appeal.id),
        thread=Thread.appeal(appeal.id),
    )
    step.record(ScoreChange(old.name, old.email, -penalty, ScoreCause.DEPOSITION))
    if old.active:
        step.state = replace(step.state, deposed_at=step.now, crown_reminder_at=step.now + DAY)
        step.notify(
            (old.email,),
            notices.CrownPrompt(reminder=False, due=crown_due(step.state)),
            thread=Thread.appeal(appeal.id),
        )
    else:
        crown_successor_of(step, old.email)
    settle_tie(step)


def crown(step: Step, cmd: Crown) -> outcomes.Accepted:
    chosen = step.resolve(cmd.who)
    if chosen.email == cmd.sender:
        raise Refusal(outcomes.CannotCrownSelf())
    make_king(step, chosen.email, "deposition", previous=cmd.sender)
    return outcomes.Crowned(king=chosen.name)


def make_king(step: Step, email: str, rule: str, previous: str | None = None) -> None:
    """214: one King at a time; the old King, if any, is a subject from now.

    Every judgement the office owes passes with the crown, never to a player who left and
    never lost: the appeals he now judges (212), a Champion to name, the tie (209), the award
    of a player still in the game (202), the parameter questions and requests to join waiting
    for an answer. A player who left is awarded nothing (114): his turn is over."""
    step.state = replace(
        step.state, king=email, deposed=None, deposed_at=None, crown_reminder_at=None
    )
    judges = [
        a.id for a in step.state.open_appeals if a.champion is None and step.state.judge_of(a)
    ]
    before = step.name_of(previous) if previous else ""
    step.notify(
        EVERYONE,
        notices.KingCrowned(king=step.name_of(email), rule=rule, previous=before, judges=judges),
    )
    for appeal in step.state.open_appeals:  # 212: the new King judges, or names a Champion
        if step.state.judge_of(appeal) is None:
            prompt_champion(step, appeal)
        elif appeal.champion is None and appeal.ruling is None:
            rulings.prompt_judge(step, appeal)  # the facts and the draft, to the new judge
    turn_player = step.state.player(step.state.turn_player or "")
    if step.state.tie:  # 209: the new King decides between the players level
        prompt_tie(step)
    elif step.state.phase is Phase.AWARD and turn_player is not None and turn_player.active:
        prompt_award(step)
    for question in step.state.parameter_questions:  # 111, 211: the King confirms or sets
        prompt_parameters(step, question, previous=before)
    for request in step.state.requests:
        if request.status is RequestStatus.PENDING:
            prompt_join(step, request)


def crown_successor_of(step: Step, email: str, rule: str = "custom") -> None:
    """The next player in turn order after `email` is King (see docs/interpretation.md)."""
    successor = player_after(step, email)
    if successor is not None and successor != email:
        make_king(step, successor, rule, previous=email)
    else:
        step.state = replace(
            step.state, king=None, deposed=None, deposed_at=None, crown_reminder_at=None
        )
