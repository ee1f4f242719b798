"""Nobody can silence or bomb a player (issue 15, item 3; every rule a player acts under).

Forged mail in a player's name never spends that player's daily allowance, and the referee
answers mail it cannot believe with at most one short note a day per address, which repeats
nothing of the refused mail. Driven through `replay` of an mbox, as a hostile player would.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from tests.attack import BOB, CARLA, EXAMPLE, Mbox, replay, text_of
from tests.sender_mail import SERVER, vouched

PASSED = vouched("dkim=pass header.d=example.org")
SPAM = "CHEAP PILLS at http://spam.example"


def guarded_config(folder: Path, extra: str = "") -> Path:
    path = folder / "guarded.toml"
    path.write_text(
        EXAMPLE.read_text(encoding="utf-8")
        + f'\n[auth]\nrequired = true\ntrusted_authserv_id = "{SERVER}"\nverify_dkim = false\n'
        + ("\n[limits]\n" + extra if extra else ""),
        encoding="utf-8",
    )
    return path


def test_a_hundred_forgeries_neither_silence_nor_bomb_the_player(tmp_path: Path) -> None:
    box = Mbox(tmp_path / "game.mbox")
    box.add(CARLA, "PROPOSE ENACT\nBe kind.\nEND", headers=PASSED)
    for i in range(100):  # Mallory, in Carla's name, without the server's word
        spam = {"subject": SPAM, "mid": f"<CHEAP-{i}@spam.example>"}
        box.add(CARLA, f"VOTE 301 NO\n{SPAM}", later=timedelta(seconds=30), **spam)
    box.add(CARLA, "VOTE 301 YES", later=timedelta(minutes=1), headers=PASSED)
    box.add(BOB, "VOTE 301 NO", later=timedelta(minutes=1), headers=PASSED)
    config = guarded_config(tmp_path, "mails_per_day = 20\n")
    done = replay(box, config)
    assert done.proposal(301)["votes"] == {CARLA: "yes", BOB: "no"}  # her own vote counts
    to_carla = [m for m in done.sent if CARLA in str(m["To"])]
    notes = [m for m in to_carla if "not obeyed" in str(m["Subject"])]
    assert len(notes) == 1  # one short note, then silence
    for mail in to_carla:
        assert SPAM not in str(mail["Subject"]) and SPAM not in text_of(mail)
        assert "CHEAP" not in mail.as_string()
    replies = done.replies_to(CARLA)
    assert "VOTE 301 YES" in replies[-1] and "limit" not in replies[-1].lower()


def test_a_stranger_is_noted_once_without_his_words(tmp_path: Path) -> None:
    box = Mbox(tmp_path / "game.mbox")
    for _ in range(5):
        box.add("victim@elsewhere.example", SPAM, subject=SPAM, later=timedelta(minutes=5))
    done = replay(box)
    sent = [m for m in done.sent if "victim@" in str(m["To"])]
    assert len(sent) == 1
    assert SPAM not in str(sent[0]["Subject"]) and SPAM not in text_of(sent[0])
