"""Alignment is exact (issue 15, item 2): `header.i` and `i=` name one mailbox, and a verdict
trusted through a wildcard counts only from the host that took the mail in. Through `replay`.
"""

from __future__ import annotations

from pathlib import Path

from tests.attack import BOB, CARLA, EXAMPLE, Mbox, replay

AR = "Authentication-Results"


def config(folder: Path, trusted: str) -> Path:
    path = folder / "guarded.toml"
    path.write_text(
        EXAMPLE.read_text(encoding="utf-8")
        + f'\n[auth]\nrequired = true\ntrusted_authserv_id = "{trusted}"\nverify_dkim = false\n',
        encoding="utf-8",
    )
    return path


def server(results: str) -> tuple[tuple[str, str], ...]:
    """mx.nomic.example's verdict and the line in which it took the mail in."""
    received = ("Received", "from mail.example.org by mx.nomic.example with ESMTPS; 1 Dec 2026")
    return ((AR, f"mx.nomic.example; {results}"), received)


def proposal(box: Mbox, trusted_host: str) -> None:
    passed = (
        (AR, f"{trusted_host}; dkim=pass header.d=example.org"),
        ("Received", f"from mail.example.org by {trusted_host} with ESMTPS; 1 Dec 2026"),
    )
    box.add(CARLA, "PROPOSE ENACT\nBe kind.\nEND", headers=passed)


def test_header_i_of_another_mailbox_is_not_the_sender(tmp_path: Path) -> None:
    box = Mbox(tmp_path / "game.mbox")
    proposal(box, "mx.nomic.example")
    dario = server("dkim=pass header.i=dario@example.org")
    box.add(BOB, "VOTE 301 NO", headers=dario)  # Dario signs, From says Bob
    # the server's DMARC pass, which Dario's signature on the shared domain earned (attacker
    # review), makes it no more Bob's
    dmarc = server(
        "dkim=pass header.i=dario@example.org header.d=example.org; "
        "dmarc=pass header.from=example.org"
    )
    box.add(BOB, "VOTE 301 NO", headers=dmarc)
    domain = server("dkim=pass header.i=@example.org header.d=example.org")
    box.add(CARLA, "VOTE 301 YES", headers=domain)
    own = server("dkim=pass header.i=bob@example.org")
    done = replay(box, config(tmp_path, "mx.nomic.example"))
    assert done.proposal(301)["votes"] == {CARLA: "yes"}
    box.add(BOB, "VOTE 301 NO", headers=own)
    done = replay(box, config(tmp_path, "mx.nomic.example"))
    assert done.proposal(301)["votes"] == {CARLA: "yes", BOB: "no"}


def test_a_wildcard_believes_only_the_host_that_took_the_mail_in(tmp_path: Path) -> None:
    box = Mbox(tmp_path / "game.mbox")
    by_mx2 = ("Received", "from evil.example by mx2.nomic.example with ESMTPS; 1 Dec 2026")
    proposal(box, "mx2.nomic.example")
    forged = ((AR, "mx1.nomic.example; dkim=pass header.d=example.org"),)
    # The forged verdict names mx1 and sits under the line in which mx2 took the mail in.
    box.add(BOB, "VOTE 301 NO", headers=(by_mx2, *forged))
    done = replay(box, config(tmp_path, "*.nomic.example"))
    assert done.proposal(301)["votes"] == {}
    real = ((AR, "mx2.nomic.example; dkim=pass header.d=example.org"), by_mx2)
    box.add(BOB, "VOTE 301 NO", headers=real)
    done = replay(box, config(tmp_path, "*.nomic.example"))
    assert done.proposal(301)["votes"] == {BOB: "no"}


def test_a_mail_to_someone_else_resent_here_never_acts(tmp_path: Path) -> None:
    box = Mbox(tmp_path / "game.mbox")
    proposal(box, "mx.nomic.example")
    passed = server("dkim=pass header.d=example.org")
    box.add(BOB, "VOTE 301 NO", to="referee@other-game.example", headers=passed)
    box.add(BOB, "VOTE 301 NO", to="Carla <carla@example.org>", headers=passed)
    done = replay(box, config(tmp_path, "mx.nomic.example"))
    assert done.proposal(301)["votes"] == {}
    assert "not addressed to this game" in " ".join(done.replies_to(BOB)[-1].split())
    cc = (*passed, ("Cc", "Nomic <REFEREE@nomic.example>"))
    box.add(BOB, "VOTE 301 NO", to="carla@example.org", headers=cc)
    done = replay(box, config(tmp_path, "mx.nomic.example"))
    assert done.proposal(301)["votes"] == {BOB: "no"}
