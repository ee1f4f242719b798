"""The edges of issue 16, each played by mail through `replay` (114, 203, 212, 213).

After a voter leaves, the JSON and the result mail count the same votes; CROWN of a player who
left is refused as such, not as an unknown name; a ruling on an appeal nobody may judge yet
says so; the Italian mail of a deposition agrees with any player.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from tests.attack import ADA, BOB, CARLA, Mbox, replay, text_of

DAY = timedelta(days=1)


def test_a_voter_who_leaves_is_counted_alike_in_the_json_and_the_result(tmp_path: Path) -> None:
    box = Mbox(tmp_path / "in.mbox")
    box.add(CARLA, "PROPOSE ENACT\nEvery player sings.\nEND")
    box.add(ADA, "VOTE 301 YES")
    box.add(BOB, "VOTE 301 NO")
    box.add(CARLA, "VOTE 301 YES")
    box.add(BOB, "QUIT")
    box.add(ADA, "STATUS", later=9 * DAY)
    done = replay(box)
    votes = done.proposal(301)["votes"]
    assert BOB not in str(votes) and len(votes) == 2
    results = [text_of(m) for m in done.sent if "adopted" in str(m["Subject"])]
    assert results and "2 in favour, 0 against" in " ".join(results[0].split())


def test_crown_of_a_player_who_left_and_a_ruling_without_a_judge(tmp_path: Path) -> None:
    box = Mbox(tmp_path / "in.mbox")
    box.add(BOB, "ACCUSE\nAda changed the rules.\nEND")
    box.add(ADA, "RULING A1\nNo.\nEND")  # an accusation has no judge until a Champion is named
    box.add(ADA, "CHAMPION A1 Carla")
    box.add(CARLA, "RULING A1\nUPHELD: she did.\nEND")
    box.add(BOB, "AGREE A1")
    box.add(CARLA, "AGREE A1")
    box.add(BOB, "QUIT")
    box.add(ADA, "CROWN Bob")
    done = replay(box)
    ada = " ".join(" ".join(r.split()) for r in done.replies_to(ADA))
    assert "A1 has no judge yet" in ada and "Only the judge" not in ada
    assert "Bob Rossi has left the game" in ada and "No player answers" not in ada
    assert done.state["king"] is None or done.state["king"] != BOB
