"""Plain-data views of the game for templates and for the public JSON state (205, 203, 212).

Views hold only dicts, lists, strings, numbers, booleans and datetimes, so a template or
`json.dumps` can take them as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from referee.core import labels, mechanics, params
from referee.core.model import Appeal, AppealKind, GameState, Phase, Proposal, Rule
from referee.core.order import turn_order


def _iso(at: datetime | None) -> str | None:
    return at.isoformat() if at is not None else None


def rule_data(rule: Rule, rules: Sequence[Rule] = ()) -> dict[str, Any]:
    """One rule for a mail; `rules` (the game's) decide whether its label alone is clear."""
    return {
        "number": rule.number,
        "identity": rule.identity,
        "mutable": rule.mutable,
        "in_force": rule.in_force,
        "title": rule.title,
        "label": rule.label,  # the document's own label ("§ 2.2")
        "path": rule.path,  # where the document had it ("II/III")
        "shown_label": labels.display(rule, rules),  # what mails show beside the number
        "text": rule.text,
        "full_text": rule.full_text,
        "amendments": [{"id": rule.amendment_id(a.seq), "text": a.text} for a in rule.amendments],
        "parameters": dict(rule.parameters),
        "numbers": list(rule.numbers),
        "history": [
            {
                "number": h.number,
                "event": h.event,
                "proposal": h.proposal,
                "at": h.at,
                "note": h.note,
            }
            for h in rule.history
        ],
    }


def _name(state: GameState, email: str | None) -> str:
    if email is None:
        return ""
    p = state.player(email)
    return p.name if p else email


def proposal_data(state: GameState, p: Proposal) -> dict[str, Any]:
    target = state.rule_by_identity(p.target) if p.target is not None else None
    amendment = None
    if p.amendment_seq is not None and p.target_number is not None:
        amendment = f"{p.target_number}.{p.amendment_seq}"
    return {
        "number": p.number,
        "proposer": p.proposer,
        "proposer_name": _name(state, p.proposer),
        "kind": p.kind.value,
        "target": p.target_number,
        "target_now": target.number if target else None,
        # the label beside the number cited, unless it is that number ("rule 201 (201)")
        "target_label": labels.beside(target, state.rules, p.target_number) if target else "",
        "target_mutable": target.mutable if target else None,
        "amendment": amendment,
        "status": p.status.value,
        "text": p.text,
        "old_text": p.old_text,
        "sets": [{"name": k, "value": v} for k, v in p.sets],
        "votes": {who: ("yes" if yes else "no") for who, yes in p.votes},
        "yes": p.yes,
        "no": p.no,
        "created_at": p.created_at,
        "debate_ends": p.debate_ends,
        "vote_deadline": p.vote_deadline,
        "revisions": p.revisions,
        "outcome": p.outcome,
    }


def appeal_data(state: GameState, a: Appeal) -> dict[str, Any]:
    return {
        "id": a.id,
        "kind": a.kind.value,
        "appellant": a.appellant,
        "appellant_name": _name(state, a.appellant),
        "judge": state.judge_of(a),
        "judge_name": _name(state, state.judge_of(a)),
        "champion": a.champion,
        "question": a.question,
        "ruling": a.ruling,
        "verdict": a.verdict.value if a.verdict else None,
        "impossible": _name(state, a.impossible) if a.impossible else None,
        "status": a.status.value,
        "agree": len(a.agree),
        "disagree": len(a.disagree),
        "accused": _name(state, a.accused) if a.accused else None,
        "asked": a.asked_at,  # when it was sent, if it waited for a day of the limit (212)
    }


def scores_data(state: GameState) -> list[dict[str, Any]]:
    """Every player, active ones in turn order first, then those who left (201, 205)."""
    ordered = list(turn_order(state)) + [p for p in state.players if not p.active]
    return [
        {
            "name": p.name,
            "email": p.email,
            "score": p.score,
            "king": p.email == state.king,
            "active": p.active,
        }
        for p in ordered
    ]


def house_values(state: GameState) -> list[dict[str, Any]]:
    """The parameters no rule in force carries: their house value holds (config, else default).
    A parameter of a mechanic that no longer runs (206's bonus once 206 is repealed) is not
    listed: a house value never revives a repealed rule.

    It depends on the rules, the house values, the declared carriers and the house mechanics
    only: the last answer is kept with the very tuples it was read from, and given again (new
    dicts) while the state holds the same ones."""
    key = (state.rules, state.house_parameters, state.carriers, state.house_mechanics)
    last = _HOUSE_VALUES[0] if _HOUSE_VALUES else None
    if last is None or any(a is not b for a, b in zip(last[0], key, strict=True)):
        values = params.effective(state)
        # The parameters some rule in force carries (`params.carrier` is not None), in one pass
        carried = {name for r in state.rules if r.in_force for name, _ in r.parameters}
        found = [
            {"name": s.name, "value": values[s.name], "meaning": s.meaning}
            for s in params.SPECS
            if s.name not in carried and mechanics.parameter_runs(state, s.name)
        ]
        last = (key, found)
        _HOUSE_VALUES[:] = [last]
    return [dict(value) for value in last[1]]


# The last `house_values`: (the tuples it was read from, its answer)
_HOUSE_VALUES: list[tuple[tuple[object, ...], list[dict[str, Any]]]] = []


def ruleset_data(state: GameState) -> dict[str, Any]:
    return {
        "rules": [rule_data(r, state.rules) for r in labels.reading_order(state.rules_in_force)],
        "house_values": house_values(state),
        "scores": scores_data(state),
        "adoption": state.adoption.value,
        "parameters": params.effective(state),
        "king": _name(state, state.king),
    }


def shown_phase(state: GameState) -> str:
    """The phase as the JSON and the mail show it: `tie` while players level at the winning
    score wait for the King to name the winner (209), whatever part of the turn it stopped."""
    if state.tie and state.phase is not Phase.OVER:
        return "tie"
    return state.phase.value


def turn_deadline(state: GameState) -> datetime | None:
    current = state.current
    if current is None or shown_phase(state) == "tie":  # the King's decision has no deadline
        return None
    if state.phase is Phase.DEBATE:
        return current.debate_ends
    if state.phase is Phase.VOTING:
        return current.vote_deadline
    return None


def _appeal_wait(state: GameState, appeal: Appeal) -> dict[str, Any]:
    """Who an open appeal waits for (212): its judge's ruling, or, once ruled, the players
    who have neither agreed nor disagreed; a majority of the active players settles it."""
    judge = state.judge_of(appeal)
    if appeal.ruling is None:
        return {"id": appeal.id, "judge": _name(state, judge) if judge else None, "missing": []}
    said = set(appeal.agree) | set(appeal.disagree)
    return {
        "id": appeal.id,
        "judge": None,
        "missing": [p.name for p in turn_order(state) if p.active and p.email not in said],
        "agree": len(appeal.agree),
        "disagree": len(appeal.disagree),
    }


QUESTION_SHOWN = 60  # characters of a waiting appeal's question that STATUS shows


def waiting_data(state: GameState, email: str) -> list[dict[str, Any]]:
    """A player's appeals waiting for a day of his limit (212), in the order they open: when
    each was sent, when it opens, and the start of its question."""
    return [
        {
            "position": position,
            "accusation": w.kind is AppealKind.ACCUSATION,
            "asked": w.asked_at,
            "opens": w.opens_at,
            "question": _opening(w.question),
        }
        for position, w in enumerate(state.waiting_of(email), start=1)
    ]


def _opening(text: str) -> str:
    """The first line of a text, cut at a word to at most `QUESTION_SHOWN` characters."""
    line = text.strip().splitlines()[0].strip() if text.strip() else ""
    if len(line) <= QUESTION_SHOWN:
        return line
    cut = line[:QUESTION_SHOWN]
    space = cut.rfind(" ")
    return (cut[:space] if space > QUESTION_SHOWN // 2 else cut).rstrip() + "…"


def status_data(state: GameState) -> dict[str, Any]:
    current = state.current
    return {
        "phase": shown_phase(state),
        "player": _name(state, state.turn_player),
        "proposal": current.number if current else None,
        "deadline": turn_deadline(state),
        "king": _name(state, state.king),
        "round": state.rounds_completed + 1,
        "adoption": state.adoption.value,
        "appeals": [a.id for a in state.open_appeals],
        "appeal_waits": [_appeal_wait(state, a) for a in state.open_appeals],
        "winner": _name(state, state.winner) if state.winner else None,
        "missing": [
            p.name
            for p in turn_order(state)
            if current is not None
            and current.vote_of(p.email) is None
            and p.first_proposal <= current.number
        ]
        if state.phase in (Phase.DEBATE, Phase.VOTING)
        else [],
    }


def public_state(state: GameState, now: datetime) -> dict[str, Any]:
    """The JSON of `status --json` and `replay --json` (INTERFACE.md section 4)."""
    current = state.current
    return {
        "game": state.name,
        "now": now.isoformat(),
        "started": state.started_at.isoformat(),
        "over": state.over,
        "winner": state.winner,
        "king": state.king,
        "deposed": state.deposed,
        "round": state.rounds_completed + 1,
        "adoption": state.adoption.value,
        "tie": list(state.tie),
        "turn": {
            "player": state.turn_player,
            "phase": shown_phase(state),
            "proposal": current.number if current else None,
            "deadline": _iso(turn_deadline(state)),
        },
        "players": scores_data(state),
        "rules": [
            {
                "number": r.number,
                "mutable": r.mutable,
                "text": r.text,
                "title": r.title,
                **({"label": r.label, "path": r.path} if r.path else {}),
                "amendments": [{"id": r.amendment_id(a.seq), "text": a.text} for a in r.amendments],
                "parameters": dict(r.parameters),
                "history": [
                    {
                        "number": h.number,
                        "event": h.event,
                        "at": h.at.isoformat(),
                        **({"proposal": h.proposal} if h.proposal is not None else {}),
                        **({"note": h.note} if h.note else {}),
                    }
                    for h in r.history
                ],
            }
            for r in state.rules_in_force
        ],
        "proposals": [
            {
                "number": p.number,
                "proposer": p.proposer,
                "kind": p.kind.value,
                "target": p.target_number,
                "amendment": (f"{p.target_number}.{p.amendment_seq}" if p.amendment_seq else None),
                "status": p.status.value,
                "text": p.text,
                "sets": dict(p.sets),
                "votes": {who: ("yes" if yes else "no") for who, yes in p.votes},
                "yes": p.yes,
                "no": p.no,
                "created": p.created_at.isoformat(),
                "outcome": p.outcome,
            }
            for p in state.proposals
        ],
        "appeals": [
            {
                "id": a.id,
                "kind": a.kind.value,
                "appellant": a.appellant,
                "judge": state.judge_of(a),
                "status": a.status.value,
                "ruling": a.ruling,
                "verdict": a.verdict.value if a.verdict else None,
                "agree": len(a.agree),
                "disagree": len(a.disagree),
            }
            for a in state.appeals
        ],
        "parameters": params.effective(state),
        "pending": {
            "parameters": [
                {"rule": q.rule, "proposal": q.proposal, "names": list(q.names)}
                for q in state.parameter_questions
            ],
            "appeals": [  # 212: sent beyond the daily limit, in the order they came
                {
                    "kind": w.kind.value,
                    "appellant": w.appellant,
                    "asked": w.asked_at.isoformat(),
                    "opens": w.opens_at.isoformat(),
                }
                for w in state.waiting_appeals
            ],
        },
    }
