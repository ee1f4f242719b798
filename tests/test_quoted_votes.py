"""A vote planted in quoted history is never obeyed; the player's own lines always are (issue 15,
item 5; rules 203, 212).

Black-box, through `replay` in an English and an Italian game: the history under a Gmail
Turkish or an Apple Mail Polish attribution, or under a bare "-----Original Message-----"
separator in another language, quoted without `>` marks, is not the player's; lines of the
player's own that only look like the start of history ("From: me", "Da: Ada" / "A: tutti",
"As Bob <bob@x> wrote:", a line of underscores, "--" without its space) leave the commands
below them obeyed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.attack import ADA, BOB, CARLA, EXAMPLE, Mbox, replay

ITALIAN = EXAMPLE.with_name("game-it.toml")
GAMES = {"en": EXAMPLE, "it": ITALIAN}
PROPOSE = {"en": "PROPOSE ENACT\n{}\nEND", "it": "PROPONGO PROMULGARE\n{}\nFINE"}
YES = {"en": "YES", "it": "SÌ"}
VOTE = {"en": "VOTE", "it": "VOTO"}

# What a client writes above the history it quotes, unmarked (the planted vote follows it).
HISTORY = {
    "gmail-tr": "Carla <carla@example.org>, 1 Ara 2026 Sal, 11:00 tarihinde şunu yazdı:",
    "gmail-tr-wrapped": "Carla De Santis <carla@example.org>, 1 Ara 2026 Sal, 11:00 tarihinde"
    " şunu\nyazdı:",
    "apple-pl": "Wiadomość napisana przez Carla <carla@example.org> w dniu 01.12.2026, o godz."
    " 11:00:",
    "outlook-pt": "-----Mensagem original-----",
    "outlook-pl": "-----Wiadomość oryginalna-----",
    "outlook-ru": "-----Исходное сообщение-----",
    "outlook-de": "-----Ursprüngliche Nachricht-----",
    "outlook-fr": "-----Message d'origine-----",
    "outlook-es": "-----Mensaje original-----",
    "outlook-nl": "-----Oorspronkelijk bericht-----",
    "outlook-sv": "-----Ursprungligt meddelande-----",
    "outlook-fi": "-----Alkuperäinen viesti-----",
    "outlook-tr": "-----Özgün İleti-----",
    "outlook-cs": "-----Původní zpráva-----",
    "outlook-it": "-----Messaggio originale-----",
}
# Lines of the player's own that only look like the start of history, in either language.
OWN = {
    "en": ["From: me", "Sent: now", "As Bob <bob@x> wrote:", "________________", "--"],
    "it": ["Da: Ada\nA: tutti", "Inviato: adesso", "Come Bob <bob@x> ha scritto:", "--"],
}


@pytest.mark.parametrize("language", ["en", "it"])
def test_votes_in_unmarked_history_are_not_obeyed_and_own_votes_are(
    tmp_path: Path, language: str
) -> None:
    """One proposal is open at a time: each mail's reply says what was read from it."""
    box = Mbox(tmp_path / "game.mbox")
    vote, yes = VOTE[language], YES[language]
    box.add(CARLA, PROPOSE[language].format("Be kind."))
    for history in HISTORY.values():
        # Bob votes yes; the quote holds a no (taken for his, the two would both be refused).
        box.add(BOB, f"{vote} 301 {yes}\n\n{history}\n\n{vote} 301 NO\nThanks\n")
    answers = [yes, "NO"] * len(OWN[language])
    for line, answer in zip(OWN[language], answers, strict=False):
        box.add(ADA, f"Ciao\n{line}\n{vote} 301 {answer}\n")
    done = replay(box, GAMES[language])
    to_bob, to_ada = done.replies_to(BOB), done.replies_to(ADA)
    assert len(to_bob) == len(HISTORY) and len(to_ada) == len(OWN[language])
    for name, reply in zip(HISTORY, to_bob, strict=True):
        assert f"> {vote} 301 {yes}" in reply and f"{vote} 301 NO" not in reply, (name, reply)
    for line, answer, reply in zip(OWN[language], answers, to_ada, strict=False):
        assert f"> {vote} 301 {answer}" in reply, (line, reply)
    last = "yes" if answers[len(OWN[language]) - 1] == yes else "no"
    assert done.proposal(301)["votes"] == {BOB: "yes", ADA: last}
