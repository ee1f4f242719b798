"""The King's short replies to the referee's prompts, matched by In-Reply-To/References.

Serves rules 202 (award), 209 (tie), 212 and 213 (Champion, successor, the judge's yes to
the referee's draft ruling) and the parameter prompt. Every prompt is threaded under a root
Message-ID naming what it asks (`<game.award-301@domain>`), and its own Message-ID names the
thread too
(`<game.award-301.<digest>@domain>`), so In-Reply-To alone leads back to the question. A reply
in that thread with no command in it, just "7", "Bob Rossi" or "yes", is read as the answer
the prompt asked for. A reply that holds a command is obeyed as written; one that holds
neither is told the command its thread waits for (`expected`, `awaited`: an appeal's RULING
from its judge, then AGREE or DISAGREE); an AGREE or DISAGREE offered alone as a hint is
written with the open appeal's id (`with_appeal`).
"""

from __future__ import annotations

import re

from referee.core.engine import find_player
from referee.core.events import (
    Admit,
    Award,
    Command,
    Confirm,
    Crown,
    GiveRuling,
    NameChampion,
    NameWinner,
)
from referee.core.model import AppealKind, AppealStatus, GameState, Phase
from referee.core.threads import Thread, ThreadKind
from referee.mail.commands import NO_WORDS, REGISTRY, fold
from referee.mail.outgoing import thread_in

YES = ("YES", "Y", "OK", "SI", "CONFIRM", "CONFERMO", "CONFIRMED", "CONFERMATO", "KEEP")


def thread_of(references: tuple[str, ...], in_reply_to: str, game: str) -> Thread | None:
    """The prompt's thread (`award-301`) if the mail answers one of the game's prompts: its
    In-Reply-To or References name the thread's root or one of the thread's own mails."""
    for reference in (in_reply_to, *reversed(references)):
        thread = thread_in(reference, game)
        if thread is not None and thread.prompt:
            return thread
    return None


def first_words(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip().rstrip(".!")
    return ""


def infer(state: GameState, sender: str, thread: Thread, text: str) -> Command | None:
    """The command a bare reply in a prompt's thread stands for, or None.

    Who may give it is the engine's question: a bare reply read as a command is refused or
    obeyed like the command written out, and the reply says how it was read.
    """
    answer = first_words(text)
    if not answer:
        return None
    if thread.kind is ThreadKind.AWARD:
        number = re.fullmatch(r"(\d{1,4})(\s*(points?|punti))?", answer, re.I)
        return Award(sender, int(number.group(1))) if number else None
    if thread.kind is ThreadKind.JOIN:
        word = fold(answer.split()[0]).strip(".!,")
        if thread.number is not None and word in YES + NO_WORDS:
            # a bare yes to a look-alike's request is marked, for the engine to refuse it
            request = state.request(thread.number)
            bare = request is not None and bool(request.lookalikes)
            return Admit(sender, thread.number, word in YES, bare=bare)
        return None
    if thread.kind is ThreadKind.PARAMETERS:
        rule = state.rule_by_identity(thread.number) if thread.number is not None else None
        if rule is not None and fold(answer.split()[0]) in YES:
            return Confirm(sender, rule.number)
        return None
    if thread.kind is ThreadKind.APPEAL:  # 212: the judge approves the referee's draft
        appeal = state.appeal(thread.key)
        word = fold(answer.split()[0]).strip(".!,")
        if appeal is not None and appeal.draft is not None and word in YES:
            return GiveRuling(sender, appeal.id, "", appeal.draft.value)
    if find_player(state, answer) is None:
        return None
    if thread.kind is ThreadKind.TIE:
        return NameWinner(sender, answer)
    if thread.kind is ThreadKind.APPEAL:
        if sender == state.deposed:
            return Crown(sender, answer)
        appeal = state.appeal(thread.key)
        if appeal is not None and state.judge_of(appeal) is None:
            return NameChampion(sender, appeal.id, answer)
    return None


def expected(state: GameState, sender: str, thread: Thread | None, text: str) -> Command | None:
    """What a bare reply that could not be taken as an answer would have meant, for the hint
    "did you mean AWARD 7?": a number from the King while an award waits, in any thread."""
    answer = first_words(text)
    if thread is not None:
        return None
    number = re.fullmatch(r"(\d{1,4})(\s*(points?|punti))?", answer, re.I)
    if number and sender == state.king and state.phase is Phase.AWARD:
        return Award(sender, int(number.group(1)))
    return None


def awaited(state: GameState, sender: str, thread: Thread | None, language: str) -> list[str]:
    """The commands an appeal's thread waits for from `sender`, written out, for the hint of a
    reply in it without one (212, 213): the judge's RULING while none is given ("My ruling:
    ..." is words, not the command), then every player's AGREE or DISAGREE ("I agree")."""
    if thread is None or thread.kind is not ThreadKind.APPEAL:
        return []
    appeal = state.appeal(thread.key)
    player = state.player(sender)
    if appeal is None or appeal.status is not AppealStatus.OPEN or player is None:
        return []
    keyword = {spec.name: spec.italian if language == "it" else spec.english for spec in REGISTRY}
    end = "FINE" if language == "it" else "END"
    if appeal.ruling is None:
        if sender != state.judge_of(appeal):
            return []
        verdicts = "ACCOLTA|RESPINTA" if language == "it" else "UPHELD|DISMISSED"
        decided = appeal.kind is AppealKind.ACCUSATION or appeal.about is not None
        verdict = f" {verdicts}" if decided else ""
        return [f"{keyword['ruling']} {appeal.id}{verdict} ... {end}"]
    if not player.active:
        return []
    return [f"{keyword['agree']} {appeal.id}", f"{keyword['disagree']} {appeal.id}"]


def with_appeal(meant: str, state: GameState) -> str:
    """AGREE or DISAGREE offered alone ("DISACCORDO, troppo burocratico"), written in full
    with the open appeal it can answer: `DISACCORDO A1`, or `DISAGREE A1|A2` when several
    wait for the table's agreement (212); any other command as it is."""
    written = meant.split()
    if len(written) != 1 or fold(written[0]) not in _AGREEING:
        return meant
    ruled = [a.id for a in state.open_appeals if a.ruling is not None]
    return f"{written[0]} {'|'.join(ruled)}" if ruled else meant


_AGREEING = {
    fold(word)
    for s in REGISTRY
    if s.name in ("agree", "disagree")
    for word in (s.english, s.italian)
}


def spell(command: Command, language: str) -> str:
    """The command written out as a player would type it, in the game's language."""
    keyword = {spec.name: spec for spec in REGISTRY}
    italian = language == "it"

    def word(name: str) -> str:
        spec = keyword[name]
        return spec.italian if italian else spec.english

    if isinstance(command, Award):
        return f"{word('award')} {command.points}"
    if isinstance(command, Confirm):
        return f"{word('confirm')} {command.rule}"
    if isinstance(command, Crown):
        return f"{word('crown')} {command.who}"
    if isinstance(command, NameChampion):
        return f"{word('champion')} {command.appeal} {command.who}"
    if isinstance(command, NameWinner):
        return f"{word('winner')} {command.who}"
    if isinstance(command, GiveRuling):
        verdicts = {"upheld": "ACCOLTA", "dismissed": "RESPINTA"} if italian else {}
        verdict = verdicts.get(command.verdict or "", (command.verdict or "").upper())
        return f"{word('ruling')} {command.appeal} {verdict}".rstrip()
    if isinstance(command, Admit):
        yes, no = ("SÌ", "NO") if italian else ("YES", "NO")
        return f"{word('admit')} {command.request} {yes if command.yes else no}"
    return ""
