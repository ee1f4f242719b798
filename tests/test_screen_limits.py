"""What one player may ask in a day, and one mail in one reply (issue 15, item 3; rule 212).

Driven through `replay` of an mbox on the example game, as a hostile player would: an attacker
opened 300 appeals in a day and held the game; 50 x RULES in one mail made a 1.8 MB reply.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from tests.attack import ADA, BOB, CARLA, EXAMPLE, Mbox, replay


def appeals(count: int, first: int = 0) -> str:
    return "\n\n".join(f"APPEAL\nQuestion {n}: may I?\nEND" for n in range(first, first + count))


def test_appeals_beyond_the_days_limit_wait_for_midnight(tmp_path: Path) -> None:
    box = Mbox(tmp_path / "game.mbox")
    for mail in range(3):  # 3 mails of 3 appeals: the example allows 5 a day
        box.add(BOB, appeals(3, 3 * mail), later=timedelta(minutes=5))
    box.add(CARLA, appeals(1, 100), later=timedelta(minutes=5))  # another player is not held
    done = replay(box)
    opened = [a for a in done.state["appeals"] if a["appellant"] == BOB]
    assert len(opened) == 5
    assert [a["appellant"] for a in done.state["appeals"]].count(CARLA) == 1
    waiting = done.state["pending"]["appeals"]
    assert [w["appellant"] for w in waiting] == [BOB] * 4
    assert {w["opens"] for w in waiting} == {"2026-12-02T00:00:00+00:00"}
    said = " ".join(done.replies_to(BOB)[-1].split())
    # the limit said once, then a short line for each other appeal that waits
    assert said.count("Waiting. Taken, not opened yet: you have opened 5 appeals") == 1
    assert said.count("Waiting. Taken, not opened yet, by the same limit: your appeal") == 2
    assert "number 2 in your line" in said and "number 4 in your line" in said
    second = " ".join(done.replies_to(BOB)[-2].split())
    assert second.count("Waiting.") == 1  # the sixth, in the second mail
    # the next day (UTC) the four open first, then his new one, the fifth of the day
    box.add(BOB, appeals(1, 50), later=timedelta(days=1))
    done = replay(box)
    opened = [a for a in done.state["appeals"] if a["appellant"] == BOB]
    assert len(opened) == 10 and not done.state["pending"]["appeals"]
    assert "Your appeal is A11." in done.replies_to(BOB)[-1]


def test_the_same_question_twice_in_one_mail_is_answered_once(tmp_path: Path) -> None:
    box = Mbox(tmp_path / "game.mbox")
    box.add(ADA, "RULES")
    one = len(" ".join(replay(box).replies_to(ADA)[-1].split()))
    box.add(ADA, "\n".join(["RULES"] * 50))
    done = replay(box)
    said = " ".join(done.replies_to(ADA)[-1].split())
    assert said.count("Asked again in the same mail: it is answered once, above.") == 49
    assert len(said) < one + 49 * 120  # one ruleset, not fifty (was 1.76 MB)
    assert len(done.sent[-1].as_bytes()) < 400_000
    # different questions in one mail are each answered
    box.add(ADA, "RULE 101\nRULE 102\nRULE 101")
    said = " ".join(replay(box).replies_to(ADA)[-1].split())
    assert said.count("answered once, above") == 1


def test_answers_past_the_replys_cap_are_left_for_a_new_mail(tmp_path: Path) -> None:
    """Different questions still add up: past `answer_chars` the rest wait for a new mail.
    The first answer is always given, however long."""
    config = tmp_path / "capped.toml"
    config.write_text(
        EXAMPLE.read_text(encoding="utf-8") + "\n[limits]\nanswer_chars = 20000\n",
        encoding="utf-8",
    )
    box = Mbox(tmp_path / "game.mbox")
    box.add(ADA, "RULES\nRULE 101\nRULE 102\nSCORES")
    said = " ".join(replay(box, config).replies_to(ADA)[-1].split())
    assert said.count("Not answered: the answers above already fill this reply") == 3
    assert "at most 20,000 characters of answers" in said
    box.add(ADA, "RULE 101\nRULE 102")  # a new mail is answered
    said = " ".join(replay(box, config).replies_to(ADA)[-1].split())
    assert "Not answered" not in said
