"""The King's short replies to the referee's prompts, matched by In-Reply-To/References.

Serves rules 202 (award), 209 (tie), 212 and 213 (Champion, successor) and the parameter
prompt. Every prompt is threaded under a root Message-ID naming what it asks
(`<game.award-301@domain>`). A reply in that thread with no command in it, just "7", "Bob
Rossi" or "yes", is read as the answer the prompt asked for. A reply that holds a command is
obeyed as written.
"""

from __future__ import annotations

import re

from referee.core.engine import find_player
from referee.core.events import Award, Command, Confirm, Crown, NameChampion, NameWinner
from referee.core.model import GameState
from referee.mail.commands import fold

YES = ("YES", "Y", "OK", "SI", "CONFIRM", "CONFERMO", "CONFIRMED", "CONFERMATO", "KEEP")


def thread_of(references: tuple[str, ...], in_reply_to: str, slug: str) -> str | None:
    """The prompt's thread name (`award-301`) if the mail answers one of the game's prompts."""
    pattern = re.compile(rf"<{re.escape(slug)}\.((?:award|parameters|appeal)-[a-z0-9-]+|tie)@")
    for reference in (in_reply_to, *reversed(references)):
        found = pattern.match(reference.strip())
        if found:
            return found.group(1)
    return None


def first_words(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip().rstrip(".!")
    return ""


def infer(state: GameState, sender: str, thread: str, text: str) -> Command | None:
    """The command a bare reply in a prompt's thread stands for, or None."""
    answer = first_words(text)
    if not answer:
        return None
    if thread.startswith("award-") and sender == state.king:
        number = re.fullmatch(r"(\d{1,4})(\s*(points?|punti))?", answer, re.I)
        return Award(sender, int(number.group(1))) if number else None
    if thread.startswith("parameters-") and sender == state.king:
        identity = thread.split("-")[1]
        rule = state.rule_by_identity(int(identity)) if identity.isdigit() else None
        if rule is not None and fold(answer.split()[0]) in YES:
            return Confirm(sender, rule.number)
        return None
    if find_player(state, answer) is None:
        return None
    if thread == "tie" and sender == state.king:
        return NameWinner(sender, answer)
    if thread.startswith("appeal-"):
        appeal_id = thread.removeprefix("appeal-").upper()
        if sender == state.deposed:
            return Crown(sender, answer)
        appeal = state.appeal(appeal_id)
        if sender == state.king and appeal is not None and appeal.judge is None:
            return NameChampion(sender, appeal.id, answer)
    return None
