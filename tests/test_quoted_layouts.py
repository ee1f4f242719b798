"""Four families of reply layouts whose quote was read as the player's own (issue 28, item 11;
rules 203, 212): Zoho's `---- On ... wrote ----` above an unmarked quote (and its German form,
`---- Am ... schrieb Carla <addr> ----`), Outlook.com's header block in French (`De :` /
`Envoyé le :` / `À :` / `Objet :`), the same block indented (spaces, a tab) or in bold, and
the Norwegian iPad's attribution whose address holds its own link (`<a@b<mailto:a@b>>`).

The fixtures in tests/data/replies/written are written for this project in those layouts
(no text copied): each quotes Carla's `VOTE 301 NO` under the player's own words.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from referee.mail.quotes import strip_reply
from tests.test_reply_fixtures import YES, commands

WRITTEN = Path(__file__).parent / "data" / "replies" / "written"
LAYOUTS = sorted(p.name for p in WRITTEN.glob("*.txt"))


def test_each_family_has_its_fixtures() -> None:
    families = ("zoho_", "outlook_com_fr", "outlook_com_fr_indented", "ipad_norwegian")
    assert all(any(name.startswith(f) for name in LAYOUTS) for f in families), LAYOUTS


@pytest.mark.parametrize("name", LAYOUTS)
def test_the_quote_under_the_players_words_is_not_obeyed(name: str) -> None:
    reply = (WRITTEN / name).read_text(encoding="utf-8")
    own, _, history = reply.partition("\n\n")
    assert "VOTE 301 NO" in history
    assert commands(f"VOTE 301 YES\n{reply}") == YES  # the vote above the own words
    assert commands(f"{own}\nVOTE 301 YES\n\n{history}") == YES  # below them
    assert commands(f"VOTE 301 YES\n{history}") == YES  # the history right under the vote
    assert "VOTE 301 NO" not in strip_reply(reply)
    assert strip_reply(reply).startswith(own.rstrip())
