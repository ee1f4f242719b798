"""An APPEAL in reply to one of the referee's answers is about its decision (212).

The answer's thread names the answer; the decisions it kept (`writing.keep_answer`) say which
one the appeal is about: the first refused one, else the first (see docs/interpretation.md).
The desk's `look_up` stage reads it from the store before deciding, into a `known.Known`, so
that deciding needs no store.
"""

from __future__ import annotations

import json
from datetime import datetime

from referee.config import Settings
from referee.core.model import Decided
from referee.core.threads import ThreadKind
from referee.desk.debate import nearest_thread
from referee.mail.parse import InboundMail
from referee.store.store import UnitOfWork


def answered(settings: Settings, work: UnitOfWork, mail: InboundMail) -> Decided | None:
    """The decision of the referee's answer `mail` replies to, as the answer kept it."""
    game = settings.game
    thread = nearest_thread(mail.references, mail.in_reply_to, game.key, game.address)
    if thread is None or thread.kind not in (ThreadKind.ANSWER, ThreadKind.CONFIRM):
        return None
    kept = work.answer(thread.key) if thread.key else None
    if kept is None:
        return None
    facts = json.loads(kept[1])
    decisions = facts["decisions"]
    chosen = next((d for d in decisions if not d["ok"] and d["command"]), decisions[0])
    return Decided(
        sender=facts["sender"],
        at=datetime.fromisoformat(facts["at"]),
        line=chosen["line"],
        code=chosen["code"],
        ok=chosen["ok"],
        command=chosen["command"],
        subject=facts["subject"],
    )
