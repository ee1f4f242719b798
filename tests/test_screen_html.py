"""Obey what the player saw (issue 15, item 4; every rule a player acts under).

A command hidden in the HTML part (which is what the player's client shows) is never obeyed;
when the text part and the HTML part carry different commands, those are refused with a reply
that says why; a forwarded message's commands are its author's, never the forwarder's. Real
multipart mail, as clients write it, goes through the parser and the service.
"""

from __future__ import annotations

from email.message import EmailMessage
from email.utils import format_datetime
from itertools import count

import pytest

from referee.service import Referee
from tests.helpers import BOB, CARLA, DAY, T0
from tests.sender_mail import outbox, reply_text

LATER = T0 + DAY / 12
_ids = count(1)


def mail(sender: str, plain: str | None, html: str | None) -> EmailMessage:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = sender, "referee@nomic.example", "move"
    message["Date"] = format_datetime(T0)
    message["Message-ID"] = f"<html-{next(_ids)}@example.org>"
    if plain is not None:
        message.set_content(plain)
        if html is not None:
            message.add_alternative(html, subtype="html")
    else:
        assert html is not None
        message.set_content(html, subtype="html")
    return message


def proposed(referee: Referee) -> None:
    raw = mail(CARLA, "PROPOSE ENACT\nBe kind.\nEND", None).as_bytes()
    assert referee.receive(raw, T0 + DAY / 24).status == "processed"


def playing(referee: Referee, address: str) -> bool:
    player = referee.state.player(address)
    return player is not None and player.active


def vote(referee: Referee, address: str) -> bool | None:
    proposal = referee.state.proposal(301)
    assert proposal is not None
    return proposal.vote_of(address)


HIDING = {
    "display-none": '<div style="display:none">QUIT</div>',
    "visibility": '<span style="visibility: hidden">QUIT</span>',
    "hidden-attribute": "<div hidden>QUIT</div>",
    "template": "<template><p>QUIT</p></template>",
    "font-size-0": '<span style="font-size:0">QUIT</span>',
    "tiny-font": '<span style="font-size:1px;line-height:1px">QUIT</span>',
    "preheader": '<div style="max-height:0;overflow:hidden;mso-hide:all">QUIT</div>',
    "opacity": '<p style="opacity: 0">QUIT</p>',
    "white-on-white": '<p style="color:#ffffff">QUIT</p>',
    "font-white": '<font color="white">QUIT</font>',
    "same-as-background": '<div style="background:#123456"><p style="color:#123456">QUIT</p></div>',
    "off-page": '<p style="position:absolute;left:-9999px">QUIT</p>',
    "comment": "<!-- \nQUIT\n -->",
    "conditional-comment": "<!--[if mso]><p>QUIT</p><![endif]-->",
    "nested": '<div style="display:none"><table><tr><td><b>QUIT</b></td></tr></table></div>',
    # A style sheet's rules hide as an inline style does: simple selectors are matched.
    "sheet-class": "<style>.h{display:none}</style><div class=h>QUIT</div>",
    "sheet-id": "<style>/* x */ #k { visibility : hidden }</style><p id=k>QUIT</p>",
    "sheet-tag-class": "<style>p{margin:0} span.t, em{font-size:0}</style>"
    "<span class=t>QUIT</span>",
    "sheet-list": "<style>.a, .b { opacity: 0 !important }</style><div class='x b'>QUIT</div>",
    "sheet-media": "<style>@media screen { .w { color: #fff } }</style><p class=w>QUIT</p>",
    "sheet-colours": "<style>.c{color:#222} .d{background:#222}</style>"
    "<div class=d><b class=c>QUIT</b></div>",
    "sheet-tag": "<style>s{display:none}</style><s>QUIT</s>",
    # A hiding rule too complex to match makes the classes and ids it names suspect.
    "sheet-descendant": "<style>div > .h:first-child{display:none}</style><i class=h>QUIT</i>",
    "sheet-attribute": "<style>[dir] #z, .y{color:red} u:hover{display:none}</style><u>QUIT</u>",
}


@pytest.mark.parametrize("hiding", sorted(HIDING))
def test_a_command_hidden_in_the_html_is_not_obeyed(referee: Referee, hiding: str) -> None:
    proposed(referee)
    html = f"<html><body><p>VOTE 301 YES</p>{HIDING[hiding]}<p>Bob</p></body></html>"
    assert referee.receive(mail(BOB, None, html).as_bytes(), LATER).status == "processed"
    assert playing(referee, BOB)  # the hidden QUIT did nothing
    assert vote(referee, BOB) is True  # the visible vote counted


@pytest.mark.parametrize("hiding", ["display-none", "white-on-white", "missing"])
def test_a_command_in_the_text_part_the_html_hides_is_refused_and_explained(
    referee: Referee, hiding: str
) -> None:
    proposed(referee)
    hidden = "" if hiding == "missing" else HIDING[hiding]
    html = f"<p>VOTE 301 YES</p>{hidden}<p>Bob</p>"
    raw = mail(BOB, "VOTE 301 YES\nQUIT\nBob\n", html).as_bytes()
    assert referee.receive(raw, LATER).status == "processed"
    assert playing(referee, BOB)
    assert vote(referee, BOB) is True  # what both parts say is obeyed
    said = reply_text(referee)
    assert "> QUIT" in said
    assert "Not obeyed: this line is in the plain-text part of your mail but not in" in said


def test_a_command_only_the_html_shows_is_refused_too(referee: Referee) -> None:
    proposed(referee)
    raw = mail(BOB, "Hello\n", "<p>Hello</p><p>VOTE 301 NO</p>").as_bytes()
    assert referee.receive(raw, LATER).status == "refused"
    assert vote(referee, BOB) is None
    said = reply_text(referee)
    assert "> VOTE 301 NO" in said
    assert "in the part your mail program shows (HTML) but not in the plain-text part" in said


def test_parts_that_agree_are_obeyed_as_clients_write_them(referee: Referee) -> None:
    """Gmail's and Outlook's two parts of one mail: the same commands, laid out differently."""
    plain = "PROPOSE ENACT\nBe kind, always, to everyone at the table.\nEND\n\nThanks,\nCarla\n"
    html = (
        '<div dir="ltr"><div>propose   enact</div><div>Be kind, always, to everyone at the'
        " table.</div><div>END</div><div><br></div><div>Thanks,</div><div>Carla</div></div>"
        '<div class="gmail_quote">On Tue, Ada wrote:<blockquote>QUIT</blockquote></div>'
    )
    assert referee.receive(mail(CARLA, plain, html).as_bytes(), LATER).status == "processed"
    assert referee.state.current_proposal == 301
    assert "Not obeyed" not in reply_text(referee)


def test_a_forwarded_messages_commands_are_not_the_forwarders(referee: Referee) -> None:
    """Bob forwards Carla's mail as an attachment, with his own vote after it: Carla's QUIT is
    hers, quoted back as not obeyed; Bob's own text is read, wherever it stands."""
    proposed(referee)
    forwarded = mail(CARLA, "QUIT\nVOTE 301 NO\n", None)
    outer = EmailMessage()
    outer["From"], outer["To"], outer["Subject"] = BOB, "referee@nomic.example", "Fwd: move"
    outer["Message-ID"] = "<forward-1@example.org>"
    outer.set_content("See the attached.\n")
    outer.add_attachment(forwarded)  # message/rfc822
    own = EmailMessage()
    own.set_content("VOTE 301 YES\n")
    outer.attach(own)  # the player's own text after the attachment (Apple Mail does this)
    raw = outer.as_bytes()
    receipt = referee.receive(raw, LATER)
    assert receipt.status == "processed"
    assert playing(referee, BOB) and playing(referee, CARLA)
    assert vote(referee, BOB) is True  # his own words after the attachment are read
    said = reply_text(referee)
    assert "> QUIT" in said and "> VOTE 301 NO" in said
    assert said.count("Not obeyed: this line is in a message attached to your mail") == 2
    assert vote(referee, CARLA) is None


def test_a_forward_alone_obeys_nothing(referee: Referee) -> None:
    proposed(referee)
    outer = EmailMessage()
    outer["From"], outer["To"], outer["Subject"] = BOB, "referee@nomic.example", "Fwd"
    outer["Message-ID"] = "<forward-2@example.org>"
    outer.set_content("FYI\n")
    outer.add_attachment(mail(CARLA, "VOTE 301 NO\n", None))
    assert referee.receive(outer.as_bytes(), LATER).status == "processed"
    assert vote(referee, BOB) is None and vote(referee, CARLA) is None
    assert "attached to your mail" in reply_text(referee)
    assert [m for m in outbox(referee, "reply") if BOB in str(m["To"])]


def test_a_quote_only_the_text_part_marks_is_no_disagreement(referee: Referee) -> None:
    """A client whose HTML quote the referee does not recognise: the quoted vote shows in the
    HTML as text, but the text part quotes it ("> "), so nothing disagrees and nothing acts."""
    proposed(referee)
    plain = "VOTE 301 YES\n\n> VOTE 301 NO\n> Carla\n"
    html = "<p>VOTE 301 YES</p><div class='zmail-history'><div>VOTE 301 NO</div>Carla</div>"
    assert referee.receive(mail(BOB, plain, html).as_bytes(), LATER).status == "processed"
    assert vote(referee, BOB) is True
    assert "Not obeyed" not in reply_text(referee)


@pytest.mark.parametrize(
    "html",
    [
        '<p style="display:none">A preheader, never closed<p>VOTE 301 YES',  # HTML closes it
        "<style>.h{display:none} .a .b{display:none} .w{color:#fff}</style>"
        '<p class="x" style="background:#000"><span class=w>VOTE 301 YES</span></p>',
        '<html><body bgcolor="#111111"><p style="color:#ffffff">VOTE 301 YES</p></body></html>',
        '<div style="background-color:transparent;font-size:13px">VOTE 301 YES</div>',
    ],
    ids=["unclosed-hidden-p", "sheet-hides-others", "white-on-dark", "transparent-background"],
)
def test_visible_commands_are_read_as_a_browser_shows_them(referee: Referee, html: str) -> None:
    proposed(referee)
    assert referee.receive(mail(BOB, None, html).as_bytes(), LATER).status == "processed"
    assert vote(referee, BOB) is True


def test_a_request_a_style_sheet_hides_is_not_answered(referee: Referee) -> None:
    """The attacker's mail: HTML only, a <style> block hiding the div that asks for rule 201."""
    proposed(referee)
    html = "<style>.h{display:none}</style><p>VOTE 301 YES</p><div class=h>RULE 201</div>"
    assert referee.receive(mail(BOB, None, html).as_bytes(), LATER).status == "processed"
    assert vote(referee, BOB) is True
    said = reply_text(referee)
    assert "> VOTE 301 YES" in said
    assert "RULE 201" not in said
