"""A mechanics block in plain words, its problems, and a dry run, in English and Italian
(issue 26; rules 101, 207: players vote on what a rule will do, so the mail says it plainly).

`describe(program, language)` gives one sentence per statement ("When a proposal is adopted:
its author gets 40 coins"); `problem_text` says why a block is refused, with its line and
column; `dry_run` runs the block on the game as it stands, as if adopted now, and
`dry_run_text` says what it would change ("If adopted now: Bob 0 → 40 coins when 302 passes").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction

from referee.core import interpreter as i
from referee.core import program as p

_WORDS: Mapping[str, Mapping[str, str]] = {
    "en": {
        "me": "the player acting",
        "author": "its author",
        "king": "the King",
        "game": "the game",
        "voter": "the voter",
        "vote": "the vote is yes",
        "player": "the player",
        "amount": "the award",
        "proposal": "the proposal's number",
    },
    "it": {
        "me": "chi agisce",
        "author": "il suo autore",
        "king": "il Re",
        "game": "la partita",
        "voter": "chi vota",
        "vote": "il voto è sì",
        "player": "il giocatore",
        "amount": "il premio",
        "proposal": "il numero della proposta",
    },
}
_OPERATORS: Mapping[str, Mapping[str, str]] = {
    "en": {
        "and": "and",
        "or": "or",
        "=": "is",
        "!=": "is not",
        "<": "is less than",
        "<=": "is at most",
        ">": "is more than",
        ">=": "is at least",
        "+": "+",
        "-": "-",
        "*": "×",
        "/": "÷",
    },
    "it": {
        "and": "e",
        "or": "o",
        "=": "è",
        "!=": "non è",
        "<": "è meno di",
        "<=": "è al massimo",
        ">": "è più di",
        ">=": "è almeno",
        "+": "+",
        "-": "-",
        "*": "×",
        "/": "÷",
    },
}
_EVENTS: Mapping[str, Mapping[str, str]] = {
    "en": {
        "proposal.made": "When a proposal is made",
        "proposal.adopted": "When a proposal is adopted",
        "proposal.rejected": "When a proposal is rejected",
        "vote.cast": "When a vote is cast",
        "turn.started": "When a turn starts",
        "turn.ended": "When a turn ends",
        "award.given": "When the King gives a turn's award",
        "player.joined": "When a player joins",
        "player.left": "When a player leaves",
        "action": "When a player does {name}",
    },
    "it": {
        "proposal.made": "Quando viene fatta una proposta",
        "proposal.adopted": "Quando una proposta è adottata",
        "proposal.rejected": "Quando una proposta è respinta",
        "vote.cast": "Quando qualcuno vota",
        "turn.started": "Quando inizia un turno",
        "turn.ended": "Quando finisce un turno",
        "award.given": "Quando il Re assegna il premio del turno",
        "player.joined": "Quando entra un giocatore",
        "player.left": "Quando un giocatore lascia",
        "action": "Quando un giocatore esegue {name}",
    },
}
_PERIODS = {
    "en": {"day": "day", "week": "week", "month": "month", "turn": "turn"},
    "it": {"day": "giorno", "week": "settimana", "month": "mese", "turn": "turno"},
}
_PHRASES: Mapping[str, Mapping[str, str]] = {
    "en": {
        "counter_player": "Every player has {name}, starting at {start}",
        "counter_game": "The game has {name}, starting at {start}",
        "points": "Points are counted with {decimals} decimals",
        "min": "never below {n}",
        "max": "never above {n}",
        "decimals": "with {n} decimals",
        "every_start": "At the start of every {period}",
        "every_end": "At the end of every {period}",
        "action": "{who} may write {command}{args}{limit}",
        "who_player": "Any player",
        "who_king": "The King",
        "limit": ", at most {n} times a {period}",
        "accepted": "; it is an offer that {by} accepts within {days} days",
        "forbid_propose": "No player may propose while {cond}",
        "forbid_action": "No player may do {name} while {cond}",
        "win": "{who} wins when {cond}",
        "win_each": "A player {who} wins when {cond}",
        "give": "{who} gets {n} {counter}",
        "take": "{who} loses {n} {counter}",
        "move": "{n} {counter} go from {source} to {target}",
        "set": "{who}'s {counter} becomes {n}",
        "set_game": "{counter} becomes {n}",
        "roll": "a die {name} is rolled from {low} to {high}",
        "announce": 'the referee announces "{text}"',
        "require": "only if {cond}",
        "if": "if {cond}: {then}",
        "else": "; otherwise: {otherwise}",
        "each": "for each player {name}: {body}",
        "ask": 'the King answers yes to "{question}"',
        "of": "{holder}'s {counter}",
        "floor": "({x}, rounded down)",
        "count": "the number of players",
        "pot": "the game's pot",
        "if_clause": ", if {cond}",
    },
    "it": {
        "counter_player": "Ogni giocatore ha {name}, che parte da {start}",
        "counter_game": "La partita ha {name}, che parte da {start}",
        "points": "I punti si contano con {decimals} decimali",
        "min": "mai sotto {n}",
        "max": "mai sopra {n}",
        "decimals": "con {n} decimali",
        "every_start": "All'inizio di ogni {period}",
        "every_end": "Alla fine di ogni {period}",
        "action": "{who} può scrivere {command}{args}{limit}",
        "who_player": "Ogni giocatore",
        "who_king": "Il Re",
        "limit": ", al massimo {n} volte per {period}",
        "accepted": "; è un'offerta che {by} accetta entro {days} giorni",
        "forbid_propose": "Nessuno può proporre mentre {cond}",
        "forbid_action": "Nessuno può eseguire {name} mentre {cond}",
        "win": "{who} vince quando {cond}",
        "win_each": "Un giocatore {who} vince quando {cond}",
        "give": "{who} riceve {n} {counter}",
        "take": "{who} perde {n} {counter}",
        "move": "{n} {counter} passano da {source} → {target}",
        "set": "{counter} di {who} diventa {n}",
        "set_game": "{counter} diventa {n}",
        "roll": "si lancia un dado {name} da {low} a {high}",
        "announce": 'l\'arbitro annuncia "{text}"',
        "require": "solo se {cond}",
        "if": "se {cond}: {then}",
        "else": "; altrimenti: {otherwise}",
        "each": "per ogni giocatore {name}: {body}",
        "ask": 'il Re risponde sì a "{question}"',
        "of": "{counter} di {holder}",
        "floor": "({x}, per difetto)",
        "count": "il numero dei giocatori",
        "pot": "la cassa della partita",
        "if_clause": ", se {cond}",
    },
}
_PROBLEMS: Mapping[str, Mapping[p.ProblemCode, str]] = {
    "en": {
        p.ProblemCode.SYNTAX: "this is not the notation at “{detail}”; expected: {expected}",
        p.ProblemCode.INDENT: "an indented line that continues no line ending in “:”",
        p.ProblemCode.UNKNOWN_WORD: "“{detail}” is not a word the notation knows here",
        p.ProblemCode.UNDECLARED: "no rule declares the counter “{detail}” (COUNTER {detail} …)",
        p.ProblemCode.UNKNOWN_NAME: "“{detail}” means nothing here",
        p.ProblemCode.TYPES: "a {detail} where a {expected} is needed",
        p.ProblemCode.ME_OUTSIDE_ACTION: "“me” only means something inside an ACTION",
        p.ProblemCode.COMMAND_NAME: "an action may not be named like the command {detail}",
        p.ProblemCode.FORBID_VOTE: "no rule may take away a player's vote (rule {detail})",
        p.ProblemCode.DUPLICATE: "“{detail}” is declared or named twice",
        p.ProblemCode.KIND_CLASH: "“{detail}” is already a counter for each {expected}",
        p.ProblemCode.ASK_PLACE: "ASK king “…” is only the condition of an IF, outside FOR EACH",
    },
    "it": {
        p.ProblemCode.SYNTAX: "qui non è la notazione, a “{detail}”; atteso: {expected}",
        p.ProblemCode.INDENT: "una riga rientrata che non continua una riga con “:”",
        p.ProblemCode.UNKNOWN_WORD: "“{detail}” non è una parola che la notazione conosce qui",
        p.ProblemCode.UNDECLARED: "nessuna regola dichiara il contatore “{detail}”",
        p.ProblemCode.UNKNOWN_NAME: "“{detail}” qui non significa niente",
        p.ProblemCode.TYPES: "un {detail} dove serve un {expected}",
        p.ProblemCode.ME_OUTSIDE_ACTION: "“me” ha senso solo dentro un'AZIONE",
        p.ProblemCode.COMMAND_NAME: "un'azione non può chiamarsi come il comando {detail}",
        p.ProblemCode.FORBID_VOTE: "nessuna regola può togliere il voto (regola {detail})",
        p.ProblemCode.DUPLICATE: "“{detail}” è dichiarato o nominato due volte",
        p.ProblemCode.KIND_CLASH: "“{detail}” è già un contatore per ogni {expected}",
        p.ProblemCode.ASK_PLACE: "CHIEDI king “…” è solo la condizione di un SE (non in un PER)",
    },
}
_WHERE = {
    "en": "Line {line}, column {column}: {what}.",
    "it": "Riga {line}, colonna {column}: {what}.",
}


def _lang(language: str) -> str:
    return language if language in _PHRASES else "en"


def problem_text(problem: p.Problem, language: str) -> str:
    """Why a block is refused, with where, in the player's language."""
    lang = _lang(language)
    what = _PROBLEMS[lang][problem.code].format(
        detail=problem.detail, expected=", ".join(problem.expected) or "…"
    )
    return _WHERE[lang].format(line=problem.line, column=problem.column, what=what)


def number_text(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    return i.text_of(value, 6)


class _Words:
    def __init__(self, language: str) -> None:
        self.lang = _lang(language)
        self.phrase = _PHRASES[self.lang]
        self.words = _WORDS[self.lang]
        self.ops = _OPERATORS[self.lang]

    def say(self, key: str, **values: object) -> str:
        return self.phrase[key].format(**values)

    def name(self, name: str) -> str:
        return self.words.get(name, name)

    def expr(self, expr: p.Expr) -> str:
        if isinstance(expr, p.Number):
            return number_text(expr.value)
        if isinstance(expr, p.Name):
            return self.name(expr.name)
        if isinstance(expr, p.Attribute):
            return self.say("of", holder=self.name(expr.holder), counter=expr.counter)
        if isinstance(expr, p.Unary):
            inner = self.expr(expr.operand)
            return (
                f"-{inner}"
                if expr.operator == "-"
                else f"{'not' if self.lang == 'en' else 'non'} ({inner})"
            )
        if isinstance(expr, p.Binary):
            return f"{self.expr(expr.left)} {self.ops[expr.operator]} {self.expr(expr.right)}"
        if isinstance(expr, p.Call):
            if expr.function == "count":
                return self.say("count")
            if expr.function == "floor":
                return self.say("floor", x=self.expr(expr.args[0]))
            return f"{expr.function}({', '.join(self.expr(a) for a in expr.args)})"
        return self.say("ask", question=expr.question)

    def effects(self, effects: tuple[p.Effect, ...]) -> str:
        return "; ".join(self.effect(e) for e in effects)

    def effect(self, effect: p.Effect) -> str:
        if isinstance(effect, p.Give | p.Take):
            key = "give" if isinstance(effect, p.Give) else "take"
            who = self.say("pot") if effect.holder == p.GAME else self.name(effect.holder)
            return self.say(key, who=who, n=self.expr(effect.amount), counter=effect.counter)
        if isinstance(effect, p.Move):
            source = self.say("pot") if effect.source == p.GAME else self.name(effect.source)
            target = self.say("pot") if effect.target == p.GAME else self.name(effect.target)
            amount = self.expr(effect.amount)
            return self.say("move", n=amount, counter=effect.counter, source=source, target=target)
        if isinstance(effect, p.SetValue):
            if not effect.holder:
                return self.say("set_game", counter=effect.counter, n=self.expr(effect.value))
            who = self.name(effect.holder)
            return self.say("set", who=who, counter=effect.counter, n=self.expr(effect.value))
        if isinstance(effect, p.Roll):
            return self.say(
                "roll", name=effect.name, low=self.expr(effect.low), high=self.expr(effect.high)
            )
        if isinstance(effect, p.Announce):
            return self.say("announce", text=effect.text)
        if isinstance(effect, p.Require):
            return self.say("require", cond=self.expr(effect.condition))
        if isinstance(effect, p.If):
            said = self.say("if", cond=self.expr(effect.condition), then=self.effects(effect.then))
            if effect.otherwise:
                said += self.say("else", otherwise=self.effects(effect.otherwise))
            return said
        return self.say("each", name=effect.name, body=self.effects(effect.body))

    def declaration(self, d: p.Declaration) -> str:
        if isinstance(d, p.Counter):
            return self.counter(d)
        if isinstance(d, p.Handler):
            event = _EVENTS[self.lang]
            head = event.get(d.event) or event["action"].format(
                name=d.event.split(".", 1)[-1].upper()
            )
            if d.condition is not None:
                head += self.say("if_clause", cond=self.expr(d.condition))
            return f"{head}: {self.effects(d.body)}"
        if isinstance(d, p.Every):
            key = "every_start" if d.edge is p.Edge.START else "every_end"
            return f"{self.say(key, period=_PERIODS[self.lang][d.period])}: {self.effects(d.body)}"
        if isinstance(d, p.Action):
            return self.action(d)
        if isinstance(d, p.Forbid):
            cond = self.expr(d.condition)
            if d.move == "propose":
                return self.say("forbid_propose", cond=cond)
            return self.say("forbid_action", name=d.move.upper(), cond=cond)
        key = "win_each" if d.each else "win"
        return self.say(key, who=self.expr(d.who), cond=self.expr(d.condition))

    def counter(self, d: p.Counter) -> str:
        if d.name == p.POINTS and d.holder is None and d.start is None:
            return self.say("points", decimals=d.decimals or 0)
        key = "counter_game" if d.kind is p.HolderKind.GAME else "counter_player"
        parts = [self.say(key, name=d.name, start=number_text(d.start or Fraction(0)))]
        if d.minimum is not None:
            parts.append(self.say("min", n=number_text(d.minimum)))
        if d.maximum is not None:
            parts.append(self.say("max", n=number_text(d.maximum)))
        if d.decimals:
            parts.append(self.say("decimals", n=d.decimals))
        return ", ".join(parts)

    def action(self, d: p.Action) -> str:
        args = "".join(f" <{a.name}>" for a in d.parameters)
        limit = ""
        if d.limit is not None:
            limit = self.say("limit", n=d.limit.times, period=_PERIODS[self.lang][d.limit.per])
        who = self.say("who_king" if d.mover is p.Mover.KING else "who_player")
        said = self.say("action", who=who, command=d.name.upper(), args=args, limit=limit)
        if d.acceptance is not None:
            said += self.say("accepted", by=f"<{d.acceptance.by}>", days=d.acceptance.days)
        return f"{said}: {self.effects(d.body)}"


def describe(program: p.Program, language: str) -> list[str]:
    """One plain sentence per statement of the block, in `language`."""
    words = _Words(language)
    return [words.declaration(d) + "." for d in program.declarations]


def dry_run(
    candidate: p.Program,
    owned: Sequence[i.Owned],
    table: i.Table,
    ledger: i.Ledger,
    author: str,
    proposal: int,
) -> i.Result:
    """What the block would do if adopted now: the game's handlers and the block's run for
    the next proposal adopted (`proposal`, by `author`), on the game as it stands."""
    with_it = [*owned, i.Owned(0, 0, candidate)]
    return i.happen(with_it, table, ledger, "proposal.adopted", {"author": author})


_DRY = {
    "en": (
        "If adopted now: {changes} when {proposal} passes.",
        "If adopted now: nothing changes when {proposal} passes.",
    ),
    "it": (
        "Se adottata ora: {changes} quando passa la {proposal}.",
        "Se adottata ora: nulla cambia quando passa la {proposal}.",
    ),
}


def dry_run_text(
    result: i.Result, name_of: Callable[[str], str], language: str, proposal: int
) -> str:
    """The dry run in words: "If adopted now: Bob 0 → 40 coins when 302 passes"."""
    changed, unchanged = _DRY[_lang(language)]
    if not result.changes:
        return unchanged.format(proposal=proposal)
    parts = [
        f"{name_of(c.holder)} {number_text(c.before)} → {number_text(c.after)} {c.counter}"
        for c in result.changes
    ]
    return changed.format(changes=", ".join(parts), proposal=proposal)
