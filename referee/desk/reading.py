"""Reading a player's mail once: what it says, as one value (107, 112, 201, 203, 212).

`read` takes a mail that passed the screening and the state it is read against, and gives a
`Said`: the commands its words carry (`parse_commands` is called here alone), the ones only one
part of a text-and-HTML mail carries, the commands in its attachments (never obeyed), a bare
answer to a prompt ("7" to an award prompt), a bare yes that confirms what the referee read,
the lines quoted back as hints (a vote in plain words, a near-command), the debate it carries
to the table in a proposal's thread, and the lines of the referee's own mail it copies. No
store is read: the deciding stage takes this value and nothing else of the mail's words.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from referee.config import Settings
from referee.core import outcomes
from referee.core.events import Debate, GiveRuling, Outcome
from referee.core.model import GameState
from referee.core.threads import ThreadKind
from referee.desk.debate import debate_thread, leftover, nearest_thread
from referee.desk.echoes import copied, referee_thread
from referee.desk.hints import QUOTED, Hint, courtesy, hints, plain_vote, whole
from referee.desk.letters import at_word, item
from referee.desk.prompts import YES, first_words, infer, spell, thread_of, with_appeal
from referee.mail import outgoing
from referee.mail.commands import REGISTRY, ParsedLine, ends_in_history, fold, parse_commands
from referee.mail.parse import InboundMail
from referee.mail.quotes import strip_reply

SIGN_OFF_WORDS = 3  # words beside commands that read as a sign-off, not as debate (112)
Draft = Callable[[GameState, str], str]  # the referee's draft ruling of an appeal, rendered


@dataclass(frozen=True)
class Said:
    """What one mail says, read once.

    `written`: the commands of its own words and subject, both parts agreeing (what the
    limits on commands count); `unseen`: a refusal for each command only one part carries;
    `ignored`: the commands of its attachments, refused; `lines`: what the desk decides, line
    by line (the written commands, else the answer to a prompt or the confirmed suggestion,
    then the debate); `hinted`: the lines read as hints; `echoes`: the referee's own lines
    the mail copies; `answered`: `lines` answer a prompt or are confirmed by a bare yes;
    `confirmed`: by a bare yes."""

    written: tuple[ParsedLine, ...]
    unseen: tuple[dict[str, Any], ...]
    ignored: tuple[dict[str, Any], ...]
    lines: tuple[ParsedLine, ...]
    hinted: tuple[Hint, ...]
    echoes: frozenset[str]
    answered: bool
    confirmed: bool


def read(mail: InboundMail, state: GameState, settings: Settings, draft: Draft) -> Said:
    """Everything the mail says, against the state it is read in."""
    written, unseen = agreeing(mail, mail_commands(mail))
    ignored = [
        item(p.line, Outcome(outcomes.AttachedIgnored()))
        for p in commands(mail.sender, mail.attached)
    ][:QUOTED]
    parsed, answered, confirmed = written, False, False
    if not parsed:
        parsed = answer_to_prompt(mail, state, settings, draft)
        answered = bool(parsed)
    if not parsed:
        parsed = confirmation(mail, state, settings)
        answered = confirmed = bool(parsed)
    parsed, hinted = with_debate(mail, state, settings, parsed, answered)
    # a mail that answers no mail quotes none of the referee's (no thread to look up)
    echoes = echoes_of(mail, state, settings) if parsed and answers(mail) else frozenset()
    return Said(
        tuple(written),
        tuple(unseen),
        tuple(ignored),
        tuple(parsed),
        tuple(hinted),
        echoes,
        answered,
        confirmed,
    )


def mail_commands(mail: InboundMail) -> list[ParsedLine]:
    """The commands of a mail's subject and own words (a stranger's JOIN among them)."""
    history = ends_in_history(mail.body, mail.own_words)
    return parse_commands(mail.sender, mail.subject, mail.own_words, history)


def commands(sender: str, text: str) -> list[ParsedLine]:
    """The commands of a text with no subject: a part, the attachments, a suggestion."""
    return parse_commands(sender, "", text)


def agreeing(
    mail: InboundMail, parsed: list[ParsedLine]
) -> tuple[list[ParsedLine], list[dict[str, Any]]]:
    """The commands both parts of a text-and-HTML mail carry, and a refusal for each command
    only one of them carries (the HTML part as the reader sees it: what it hides is not in
    it). The Subject's command is in neither part and stands as it is."""
    if mail.shown is None:
        return parsed, []
    shown = commands(mail.sender, strip_reply(mail.shown))
    seen = {_said(p) for p in shown}
    # A line the text part holds anywhere, even in what it quotes, is no disagreement: clients
    # mark quotes differently in the two parts, and a quote is never obeyed anyway.
    unquoted = _QUOTE_MARKS.sub("", mail.body)
    written = {_said(p) for p in commands(mail.sender, unquoted)}
    plain_only = [p for p in parsed if p.span != (0, 0) and _said(p) not in seen]
    html_only = [p for p in shown if _said(p) not in written]
    unseen = [item(p.line, Outcome(outcomes.PartsDisagree(where="plain"))) for p in plain_only]
    unseen += [item(p.line, Outcome(outcomes.PartsDisagree(where="html"))) for p in html_only]
    return [p for p in parsed if p not in plain_only], unseen


_QUOTE_MARKS = re.compile(r"(?m)^[ \t]*(?:>[ \t]?)+")


def _said(line: ParsedLine) -> str:
    """A command line as both parts would write it: case, accents and spacing aside."""
    return fold(" ".join(line.line.split()))


def answers(mail: InboundMail) -> bool:
    """Whether the mail names a mail it answers (In-Reply-To or References): else it is in
    no thread of the game's, and no thread need be looked for."""
    return bool(mail.in_reply_to or mail.references)


def echoes_of(mail: InboundMail, state: GameState, settings: Settings) -> frozenset[str]:
    """The command lines of the referee's own mail in the thread this mail answers that the
    mail carries as part of a copy of that text (never a line typed among its own words)."""
    game = settings.game
    thread = referee_thread(
        mail.references,
        mail.in_reply_to,
        game.key,
        outgoing.domain_of(game.address),
    )
    return frozenset() if thread is None else copied(mail.own_words, state, thread)


def with_debate(
    mail: InboundMail,
    state: GameState,
    settings: Settings,
    parsed: list[ParsedLine],
    answered: bool,
) -> tuple[list[ParsedLine], list[Hint]]:
    """The lines no command took: votes in plain words and near-commands are quoted back
    (never relayed), and in a proposal's thread the rest goes to the table (112); a SAY
    there is about that proposal. Outside a thread every such line is quoted back but a
    greeting, a sign-off or the sender's own name."""
    game = settings.game
    thread = (
        debate_thread(mail.references, mail.in_reply_to, game.key, game.address, state)
        if answers(mail)
        else None  # a mail that answers no mail talks in no thread
    )
    in_proposal = thread is not None and thread.kind is ThreadKind.PROPOSAL
    number = thread.number if thread is not None and in_proposal else None
    hinted: list[Hint] = []
    # a bare answer to a prompt took its first line: the lines after it are quoted back
    # like any others ("7" then "Nice one Carla!"); a bare yes that confirms takes all
    if not answered or any(p.span != (0, 0) for p in parsed):
        kept: list[ParsedLine] = []
        for p in parsed:  # "voto sì alla 301" starts like VOTO but is not its syntax
            vote = plain_vote(p.line, number, game.language) if p.command is None else ""
            if vote and p.span != (0, 0):
                hinted.append(Hint(p.span[0], p.line, vote, confirm=True))
            else:
                kept.append(p)
        parsed = kept
        taken = [p.span for p in parsed] + [(h.index, h.index + 1) for h in hinted]
        me = state.player(mail.sender)
        own = (me.name, me.surname) if me is not None else (mail.sender_name,)
        others = [p.name for p in state.players if p.email != mail.sender]
        hinted += hints(
            mail.own_words,
            taken,
            number,
            thread is not None,
            game.language,
            mail.sender,
            own,
            others,
        )
        hinted = [full_hint(h, state, mail.sender) for h in hinted]
        hinted.sort(key=lambda h: h.index)
    if thread is None:
        return parsed, hinted
    parsed = [
        replace(p, command=replace(p.command, proposal=number))
        if isinstance(p.command, Debate) and p.command.proposal is None
        else p
        for p in parsed
    ]
    held = [(h.index, h.index + 1) for h in hinted]
    text = leftover(mail.own_words, [p.span for p in parsed] + held)
    if not text or answered or (parsed and len(text.split()) <= SIGN_OFF_WORDS):
        return parsed, hinted  # beside commands, a name or "thanks" alone is no debate
    say = next(s for s in REGISTRY if s.name == "say")
    # the reply names the words by their first line that is more than "Hi Carla,"
    talk = [line for line in text.splitlines() if line.strip()]
    shown = first_words(next((t for t in talk if not courtesy(t, own, others)), text))
    shown = shown if len(shown) <= 72 else at_word(shown, 71) + "…"
    return [*parsed, ParsedLine(shown, say, Debate(mail.sender, text, number))], hinted


def confirmation(mail: InboundMail, state: GameState, settings: Settings) -> list[ParsedLine]:
    """A bare yes in reply to "this reads as VOTE 301 YES": the commands it confirms."""
    game = settings.game
    thread = nearest_thread(mail.references, mail.in_reply_to, game.key, game.address)
    lines = state.suggestion_of(mail.sender)
    words = mail.own_words.split()
    if thread is None or thread.kind is not ThreadKind.CONFIRM or not lines or not words:
        return []
    if len(words) > 3 or fold(words[0]).strip(".,;:!") not in YES:
        return []
    said = first_words(mail.own_words)
    return [replace(p, line=said, meant=p.line, span=(0, 0)) for p in commands(mail.sender, lines)]


def answer_to_prompt(
    mail: InboundMail, state: GameState, settings: Settings, draft: Draft
) -> list[ParsedLine]:
    """A bare reply in a prompt's thread ("7" to an award prompt) is its answer."""
    thread = thread_of(mail.references, mail.in_reply_to, settings.game.key)
    if thread is None:
        return []
    command = infer(state, mail.sender, thread, mail.own_words)
    if command is None:
        return []
    if isinstance(command, GiveRuling) and not command.text:  # the judge's yes to the draft
        command = replace(command, text=draft(state, command.appeal))
    spec = next(s for s in REGISTRY if s.build is not None and _spec_for(command) == s.name)
    meant = spell(command, settings.game.language)
    lines = mail.own_words.split("\n")
    first = next(at for at, line in enumerate(lines) if line.strip())  # infer read it
    span = (first, first + 1)
    return [ParsedLine(first_words(mail.own_words), spec, command, meant=meant, span=span)]


_SPEC_NAMES = {
    "Award": "award",
    "Confirm": "confirm",
    "Crown": "crown",
    "NameChampion": "champion",
    "NameWinner": "winner",
    "Admit": "admit",
    "GiveRuling": "ruling",
}


def _spec_for(command: object) -> str:
    return _SPEC_NAMES.get(type(command).__name__, "")


def full_hint(hint: Hint, state: GameState, sender: str) -> Hint:
    """A hint of AGREE or DISAGREE alone, written with the open appeal's id (DISAGREE A1):
    then a whole command, done on a bare yes like the others."""
    meant = with_appeal(hint.meant, state) if hint.meant else ""
    if meant == hint.meant:
        return hint
    return replace(hint, meant=meant, confirm=whole(meant, sender))
