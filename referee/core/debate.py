"""The table's debate (rule 112): players' words relayed to the others, now or in a daily digest.

Rule 112 gives the players a week to criticise a proposal and suggest changes before the vote;
the referee is the table they talk across. A `Debate` event carries one player's words on one
proposal (or to the table at large, SAY): they go at once to every other active player who
takes the debate as it comes, wait for the daily digest of those who asked for one, and reach
no one who chose none. The same words (compared without case, accents or spacing) are relayed
once. Each relay is remembered as a `Post` (who, when, on what): the text itself stays in the
event log, from which the archive and the website show it.
"""

from __future__ import annotations

import hashlib
import unicodedata
from datetime import datetime

from referee.core import notices, outcomes
from referee.core.events import ChooseDelivery, Debate, Suggest
from referee.core.model import DebateDelivery, DigestItem, GameState, Post, replace
from referee.core.step import DAY, Refusal, Step
from referee.core.threads import Thread


def compared(text: str) -> str:
    """The words as compared for a repeat: folded case and accents, single spaces."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(bare.casefold().split())


def fingerprint(text: str) -> str:
    return hashlib.sha256(compared(text).encode("utf-8")).hexdigest()[:24]


def relayed_since(state: GameState, author: str, since: datetime) -> int:
    """How many of this author's messages were relayed from `since` on (the daily cap)."""
    return sum(1 for p in state.posts if p.author == author and p.at >= since)


def debate(step: Step, cmd: Debate) -> outcomes.Accepted:
    state = step.state
    if cmd.proposal is not None and state.proposal(cmd.proposal) is None:
        raise Refusal(outcomes.UnknownProposal(number=cmd.proposal))
    if not cmd.text.strip():
        raise Refusal(outcomes.EmptyText())
    digest = fingerprint(cmd.text)
    if any(p.digest == digest for p in state.posts):
        raise Refusal(outcomes.AlreadyRelayed(proposal=cmd.proposal))
    others = [p for p in state.active_players if p.email != cmd.sender]
    now = [p.email for p in others if state.delivery_of(p.email) is DebateDelivery.ALL]
    later = [p.email for p in others if state.delivery_of(p.email) is DebateDelivery.DIGEST]
    author = step.name_of(cmd.sender)
    post = Post(cmd.sender, step.now, cmd.proposal, digest)
    step.state = replace(state, posts=(*state.posts, post))
    if later:
        item = DigestItem(author, step.now, cmd.proposal, cmd.text, tuple(later))
        step.state = replace(
            step.state,
            digest=(*step.state.digest, item),
            digest_at=step.state.digest_at or step.now + DAY,
        )
    if now:
        step.notify(
            tuple(now),
            notices.DebatePost(
                author=author, author_email=cmd.sender, proposal=cmd.proposal, text=cmd.text
            ),
            thread=thread_of(cmd.proposal),
        )
    return outcomes.DebateRelayed(proposal=cmd.proposal, relayed=len(now), digest=len(later))


def thread_of(proposal: int | None) -> Thread:
    return Thread.proposal(proposal) if proposal is not None else Thread.table()


def suggest(step: Step, cmd: Suggest) -> outcomes.Accepted:
    """Keep (or, with no lines, drop) what a player's plain words seemed to mean."""
    kept = tuple((who, lines) for who, lines in step.state.suggestions if who != cmd.sender)
    chosen = (*kept, (cmd.sender, cmd.lines)) if cmd.lines else kept
    step.state = replace(step.state, suggestions=chosen)
    return outcomes.ConfirmNeeded(meant=cmd.lines)


def choose_delivery(step: Step, cmd: ChooseDelivery) -> outcomes.Accepted:
    kept = tuple((who, how) for who, how in step.state.debate_delivery if who != cmd.sender)
    chosen = (*kept, (cmd.sender, cmd.delivery)) if cmd.delivery is not DebateDelivery.ALL else kept
    step.state = replace(step.state, debate_delivery=chosen)
    return outcomes.DeliveryChosen(delivery=cmd.delivery.value)


def send_digest(step: Step) -> None:
    """The daily digest: to each player waiting for one, the day's debate by the others."""
    s = step.state
    if s.digest_at is None or step.now < s.digest_at:
        return
    readers: list[str] = []
    for item in s.digest:
        readers += [who for who in item.to if who not in readers]
    for reader in readers:
        player = s.player(reader)
        if player is None or not player.active:
            continue
        posts = [
            {"author": i.author, "at": i.at, "proposal": i.proposal, "text": i.text}
            for i in s.digest
            if reader in i.to
        ]
        step.notify((reader,), notices.DebateDigest(posts=posts))
    step.state = replace(s, digest=(), digest_at=None)
