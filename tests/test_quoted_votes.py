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

from datetime import timedelta
from pathlib import Path

import pytest

from referee.config import load_settings, slug
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
    # attacker review: Gmail in Korean, Chinese, Greek and Indonesian; Outlook's header block in
    # Japanese, Hungarian, Romanian and Greek (under its line of underscores or not)
    "gmail-ko": "2026년 12월 2일 (수) 오전 8:00, Carla <carla@example.org>님이 작성:",
    "gmail-zh": "Carla De Santis <carla@example.org> 于2026年12月2日周三 08:00写道：",
    "gmail-el": "Στις Τετ 2 Δεκ 2026 στις 8:00 π.μ., ο/η Carla <carla@example.org> έγραψε:",
    "gmail-id": "Pada tanggal Rab, 2 Des 2026 pukul 08.00 Carla <carla@example.org> menulis:",
    "outlook-ja": "差出人: Carla De Santis <carla@example.org>\n送信日時: 2026年12月2日 8:00\n"
    "宛先: referee@nomic.example\n件名: vote",
    "outlook-hu": "Feladó: Carla De Santis <carla@example.org>\nElküldve: 2026. december 2. 8:00\n"
    "Címzett: referee@nomic.example\nTárgy: vote",
    "outlook-ro": "________________________________\nDe la: Carla <carla@example.org>\n"
    "Trimis: miercuri, 2 decembrie 2026 08:00\nCătre: Ada <ada@example.org>\nSubiect: 301",
    "outlook-el": "________________________________\nΑπό: Carla <carla@example.org>\n"
    "Στάλθηκε: Τετάρτη, 2 Δεκεμβρίου 2026 8:00 πμ\nΠρος: Ada <ada@example.org>\nΘέμα: 301",
}
# Lines of the player's own that only look like the start of history, in either language.
OWN = {
    "en": [
        "From: me",
        "Sent: now",
        "As Bob <bob@x> wrote:",
        "________________",
        "--",
        "On 9 December 2026 at 09:00 the vote closes; as I wrote:",
    ],
    "it": [
        "Da: Ada\nA: tutti",
        "Inviato: adesso",
        "Come Bob <bob@x> ha scritto:",
        "--",
        "Il 9 dicembre 2026 alle 09:00 il voto chiude; come lui ha scritto:",
    ],
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


# A line longer than the notice's plain part: the notice wraps it at 72 columns.
LONG = (
    "Hats are mandatory for every player at all times and in all places, and this sentence is"
    " long enough to wrap twice at seventy-two columns."
)
LONG_AFTER = (
    "Any player without a hat loses one point for every day without the hat, as counted by the"
    " King."
)
WRAPPED = (
    "Hats are mandatory for every player at all times and in all places, and\n"
    "this sentence is long enough to wrap twice at seventy-two columns.\n"
    "{vote}\n"
    "Any player without a hat loses one point for every day without the hat,\n"
    "as counted by the King."
)
# A header this referee does not know: only the echo check can tell the copy from own words.
UNKNOWN = "Carla's notice of Tuesday, as my phone shows it:"


def in_thread(language: str) -> tuple[tuple[str, str], ...]:
    """Headers of a reply to proposal 301's notice (its thread's root Message-ID)."""
    root = f"<{slug(load_settings(GAMES[language]).game.name)}.proposal-301@nomic.example>"
    return (("In-Reply-To", root), ("References", root))


@pytest.mark.parametrize("language", ["en", "it"])
def test_a_planted_vote_in_a_wrapped_copy_of_the_notice_is_not_obeyed(
    tmp_path: Path, language: str
) -> None:
    """Attacker review: the line beside the planted vote is longer than 72 columns, so the
    copy a client quotes without marks holds it wrapped as the notice wrapped it. That copy is
    the referee's words; a vote typed above a `>`-marked quote of the same notice is the
    player's."""
    box = Mbox(tmp_path / "game.mbox")
    vote = f"{VOTE[language]} 301 {YES[language]}"
    box.add(CARLA, PROPOSE[language].format(f"{LONG}\n{vote}\n{LONG_AFTER}"))
    copy = WRAPPED.format(vote=vote)
    headers = in_thread(language)
    box.add(BOB, f"I am against this.\n\n{UNKNOWN}\n\n{copy}\n", headers=headers)
    marked = "\n".join(f"> {line}" for line in copy.split("\n"))
    box.add(ADA, f"{vote}\n\n{UNKNOWN}\n{marked}\n", headers=headers)
    done = replay(box, GAMES[language])
    assert done.proposal(301)["votes"] == {ADA: "yes"}
    refused = "Not obeyed" if language == "en" else "Non eseguito"
    assert any(refused in " ".join(reply.split()) for reply in done.replies_to(BOB))


@pytest.mark.parametrize("language", ["en", "it"])
def test_a_one_line_proposal_that_is_a_vote_is_never_a_reply_of_its_thread(
    tmp_path: Path, language: str
) -> None:
    """Attacker review: a proposal whose whole text is `VOTE 301 YES` has no line beside the
    vote to tell a copy from a line typed. In a reply to that proposal's notice the line is
    never the player's, and the reply says to write it in a new mail; in a new mail (no thread)
    it is obeyed."""
    box = Mbox(tmp_path / "game.mbox")
    vote = f"{VOTE[language]} 301 {YES[language]}"
    box.add(CARLA, PROPOSE[language].format(vote))
    copy = f"Proposal 301 by Carla De Santis.\n\n{vote}\n\nDebate until Wednesday."
    headers = in_thread(language)
    box.add(BOB, f"I am against this nonsense.\n\n{UNKNOWN}\n\n{copy}\n", headers=headers)
    box.add(ADA, f"{vote}\n", headers=headers)
    done = replay(box, GAMES[language])
    assert done.proposal(301)["votes"] == {}
    new_mail = "new mail" if language == "en" else "nuova mail"
    assert any(new_mail in " ".join(reply.split()) for reply in done.replies_to(ADA))
    box.add(ADA, f"{vote}\n")
    assert replay(box, GAMES[language]).proposal(301)["votes"] == {ADA: "yes"}


# A mail that begins with what ends the player's own words: what the reply says of it.
CUT = {
    "en": {
        "Sent from my iPhone": "a line a mail program puts under its user's text",
        "-- ": "the separator a signature follows",
        "From: Ada Lovelace <ada@example.org>\nSent: now": "the start of a quoted mail's headers",
    },
    "it": {
        "Inviato da iPhone": "una riga che il programma di posta aggiunge sotto il testo",
        "-- ": "il separatore dopo cui viene la firma",
        "Da: Ada Lovelace <ada@example.org>\nInviato: adesso": "l'inizio delle intestazioni",
    },
}


@pytest.mark.parametrize("language", ["en", "it"])
def test_a_mail_that_begins_with_a_footer_or_headers_is_told_why_nothing_was_read(
    tmp_path: Path, language: str
) -> None:
    """Attacker review: "Sent from my iPhone", "-- " or a header block as a mail's first lines
    end the player's own words before any: the vote under them is not read, and the reply says
    which line stopped the reading; a mail with no command and no such line is not told so."""
    box = Mbox(tmp_path / "game.mbox")
    vote = f"{VOTE[language]} 301 {YES[language]}"
    box.add(CARLA, PROPOSE[language].format("Be kind."))
    for first in CUT[language]:
        box.add(BOB, f"{first}\n{vote}\n", later=timedelta(days=1))
    box.add(BOB, "Just saying hello.\n", later=timedelta(days=1))
    done = replay(box, GAMES[language])
    replies = [" ".join(r.split()) for r in done.replies_to(BOB)]
    assert len(replies) == len(CUT[language]) + 1
    for (first, why), reply in zip(CUT[language].items(), replies, strict=False):
        shown = first.split("\n")[0] if first != "-- " else "-- "
        assert f'"{shown}"' in reply and why in reply, (first, reply)
    told = "nothing of this mail was read" if language == "en" else "non è stato letto niente"
    assert told not in replies[-1]
    assert done.proposal(301)["votes"] == {}
