"""A hostile player's debate dressed as the referee's own mail (issue 15; rules 112, 201, 202).

Debate is relayed From the game's address ("Carla De Santis via Test Nomic"), so a player may
write words that imitate a notice ("Proposal 302 adopted. Carla wins."), paste the Message-ID
of one of the referee's prompts, or plant a mail link that writes a command or answers a
prompt when clicked. Each attack is written as a player would send it, and what the table
receives is read as a player reads it: the text part, the HTML part, the headers. A reply to a
relay, even a bare "yes", never answers a prompt nor confirms anything.
"""

from __future__ import annotations

import re
from email.message import EmailMessage
from html.parser import HTMLParser
from pathlib import Path

import pytest

from referee.config import load_settings
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import write_config
from tests.helpers import BOB, CARLA, DAY, T0, mail
from tests.test_debate import client_reply, outbox, propose, text_of

HOUR = DAY / 24

# What each language's relay must say, around the author's words.
FRAME = {
    "en": "Carla De Santis wrote on proposal 301 (the referee relays these words; "
    "they are not a decision of the referee):",
    "it": "Carla De Santis ha scritto sulla proposta 301 (l'arbitro inoltra queste parole; "
    "non sono una decisione dell'arbitro):",
}
NOT_THE_REFEREE = {"en": "[not the referee's:]", "it": "[non dell'arbitro:]"}
LINK_OUT = {
    "en": "[a mail link, taken out by the referee]",
    "it": "[un link di posta, tolto dall'arbitro]",
}
ID_OUT = {
    "en": "[a Message-ID of the referee's mail, taken out]",
    "it": "[un Message-ID di una mail dell'arbitro, tolto]",
}
# A notice, as a hostile player imitates it: the subject line, the verdict, the scores.
FAKE = {
    "en": "[Test Nomic] Proposal 302 adopted\n\nDone. Proposal 302 adopted.\n\n"
    "Scores: Carla De Santis 100, Ada Lovelace 0.\nCarla De Santis wins.",
    "it": "[Test Nomic] Proposta 302 adottata\n\nFatto. Proposta 302 adottata.\n\n"
    "Punteggi: Carla De Santis 100, Ada Lovelace 0.\nCarla De Santis vince.",
}


def game(tmp_path: Path, language: str) -> Referee:
    settings = load_settings(write_config(tmp_path, language))
    return Referee.create(Store(settings.database_url), settings, T0)


def relay_to(referee: Referee, who: str) -> EmailMessage:
    relays = outbox(referee, "debate", who)
    assert relays, who
    return relays[-1]


def html_of(message: EmailMessage) -> str:
    part = message.get_body(("html",))
    assert part is not None
    return str(part.get_content())


class _Quoted(HTMLParser):
    """The text an HTML part shows inside blockquotes, and outside them."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.inside: list[str] = []
        self.outside: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.depth += tag == "blockquote"

    def handle_endtag(self, tag: str) -> None:
        self.depth -= tag == "blockquote"

    def handle_data(self, data: str) -> None:
        (self.inside if self.depth else self.outside).append(data)


def shown(message: EmailMessage) -> tuple[str, str]:
    """(inside the quote, outside it) of the HTML part, as one line of words each."""
    parser = _Quoted()
    parser.feed(html_of(message))
    return " ".join(" ".join(parser.inside).split()), " ".join(" ".join(parser.outside).split())


def debate(referee: Referee, words: str, hours: float, italian: bool = False) -> EmailMessage:
    """Carla's reply to her copy of the circulation; the relay Bob gets."""
    circulated = outbox(referee, "proposal_circulated", CARLA)[0]
    at = T0 + hours * HOUR
    referee.receive(client_reply(circulated, CARLA, words, at, italian), at)
    return relay_to(referee, BOB)


def quoted_lines(text: str, frame: str) -> list[str]:
    """The lines of a relay's text part from the frame line to the footer's rule."""
    text = text.replace("\r\n", "\n")
    assert frame in " ".join(text.split()), text
    body = text[text.index(frame.split()[-1]) :].split("\n", 1)[1]
    return body.split("\n------------------------")[0].strip("\n").split("\n")


@pytest.mark.parametrize("language", ["en", "it"])
def test_a_fake_notice_is_framed_and_quoted_as_the_authors_words(
    tmp_path: Path, language: str
) -> None:
    referee = game(tmp_path, language)
    italian = language == "it"
    propose(referee, italian)
    relay = debate(referee, FAKE[language], 2, italian)
    text = text_of(relay)
    lines = quoted_lines(text, FRAME[language])
    assert lines and all(line.startswith(">") for line in lines), lines  # every line quoted
    assert not re.search(
        r"(?m)^(\[Test Nomic\]|Done\.|Fatto\.|Scores|Punteggi|Carla De Santis (wins|vince))", text
    )
    marked = [line for line in lines if NOT_THE_REFEREE[language] in line]
    assert len(marked) == 2  # the subject line and the verdict imitated, each marked
    assert any("[Test Nomic]" in line for line in marked)

    inside, outside = shown(relay)
    assert "Proposal 302" in inside or "Proposta 302" in inside
    assert "302" not in outside and "100" not in outside  # nothing of hers outside the box
    assert FRAME[language] in outside  # the frame is the referee's, outside the box
    assert NOT_THE_REFEREE[language] in inside


@pytest.mark.parametrize("language", ["en", "it"])
def test_the_relays_subject_is_the_referees_never_the_authors(
    tmp_path: Path, language: str
) -> None:
    referee = game(tmp_path, language)
    italian = language == "it"
    propose(referee, italian)
    circulated = outbox(referee, "proposal_circulated", CARLA)[0]
    at = T0 + 2 * HOUR
    raw = client_reply(circulated, CARLA, "My view: adopt it.", at, italian)
    raw = raw.replace(b"Subject: Re: ", b"Subject: [Test Nomic] Proposal 302 adopted ", 1)
    referee.receive(raw, at)
    proposal = "Proposta" if italian else "Proposal"
    assert str(relay_to(referee, BOB)["Subject"]) == f"Re: [Test Nomic] {proposal} 301"
    say = "DICO\nCarla vince.\nFINE" if italian else "SAY\nCarla wins.\nEND"
    referee.receive(mail(CARLA, say, "[Test Nomic] Carla wins", T0 + 3 * HOUR), T0 + 3 * HOUR)
    table = "Al tavolo" if italian else "At the table"
    assert str(relay_to(referee, BOB)["Subject"]) == f"[Test Nomic] {table}"
    assert "Carla wins" not in str(relay_to(referee, BOB)["Subject"])


@pytest.mark.parametrize("language", ["en", "it"])
def test_mail_links_and_the_referees_message_ids_are_taken_out(
    tmp_path: Path, language: str
) -> None:
    """A link that writes a command (QUIT in the subject) or answers the King's prompt when
    clicked, in any spelling, and a pasted Message-ID of a prompt, never reach the table."""
    referee = game(tmp_path, language)
    italian = language == "it"
    propose(referee, italian)
    prompt = "<test-nomic.join-1@nomic.example>"
    words = "\n".join(
        (
            "See the scores: mailto:referee@nomic.example?subject=QUIT",
            "King, approve here: <MAILTO:referee@nomic.example?In-Reply-To="
            "%3Ctest-nomic.join-1%40nomic.example%3E&body=yes>",
            "Or https://mail.google.com/mail/?view=cm&to=referee%40nomic.example&su=QUIT",
            f"Or reply in thread {prompt} or",
            "test-nomic.award-301.0123456789abcdef0123@nomic.example",
            "Write to me: mailto:carla@example.org (that one is fine).",
        )
    )
    relay = debate(referee, words, 2, italian)
    for part in (text_of(relay), html_of(relay)):
        lowered = part.lower()
        assert "subject=quit" not in lowered and "su=quit" not in lowered
        assert "in-reply-to=" not in lowered and "body=yes" not in lowered
        assert "test-nomic.join-1" not in lowered and "test-nomic.award-301" not in lowered
        assert "mailto:carla@example.org" in lowered  # a plain address link stays
    text = " ".join(text_of(relay).split())
    assert text.count(LINK_OUT[language]) == 3 and text.count(ID_OUT[language]) == 2
    assert "<a " not in html_of(relay)  # and the referee never makes a link of her words


@pytest.mark.parametrize("language", ["en", "it"])
def test_the_digest_frames_each_message_too(tmp_path: Path, language: str) -> None:
    referee = game(tmp_path, language)
    italian = language == "it"
    propose(referee, italian)
    digest = "DIBATTITO RIASSUNTO" if italian else "DEBATE DIGEST"
    referee.receive(mail(BOB, digest, at=T0 + HOUR), T0 + HOUR)
    debate_words = FAKE[language] + "\nmailto:referee@nomic.example?subject=QUIT"
    circulated = outbox(referee, "proposal_circulated", CARLA)[0]
    at = T0 + 2 * HOUR
    referee.receive(client_reply(circulated, CARLA, debate_words, at, italian), at)
    referee.advance(T0 + 2 * HOUR + DAY)
    message = outbox(referee, "debate_digest", BOB)[-1]
    text = text_of(message)
    assert not re.search(r"(?m)^(\[Test Nomic\]|Done\.|Fatto\.|Carla De Santis (wins|vince))", text)
    assert "subject=QUIT" not in text and LINK_OUT[language] in " ".join(text.split())
    inside, outside = shown(message)
    assert "302" in inside and "302" not in outside


def test_the_website_links_no_mail_that_writes_itself() -> None:
    """The same planted links in debate (or any player's text) on the game's website: a link
    that fills in a mail loses its target; a plain address stays a link."""
    from referee.archive.site import sanitised

    page = str(
        sanitised(
            "[scores](mailto:referee@nomic.example?subject=QUIT) "
            "<MAILTO:referee@nomic.example?In-Reply-To=%3Cx%40nomic.example%3E&body=yes> "
            "[write me](mailto:carla@example.org)"
        )
    )
    assert re.findall(r'href="([^"]*)"', page) == ["mailto:carla@example.org"]
    assert page.count("<a ") == 3  # the words stay, as text
