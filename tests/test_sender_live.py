"""Sender authentication on a real mail stack: on by default with IMAP (Dovecot, SMTP).

The mail is delivered to Dovecot over LMTP, read by the service over IMAP, answered over SMTP:
a forged From is refused (and told why), a mail vouched for by the receiving server is obeyed.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from referee.config import load_settings
from referee.runner import Service
from referee.service import Referee
from referee.store.store import Store
from tests.conftest import REFEREE, live_config
from tests.helpers import CARLA, T0
from tests.mailstack import MailStack
from tests.sender_mail import SERVER, raw_mail
from tests.sender_mail import vouched as verdict


def test_with_imap_a_forged_sender_is_refused_and_the_servers_word_believed(
    tmp_path: Path, stack: MailStack
) -> None:
    config = live_config(
        tmp_path, stack, f"sqlite:///{tmp_path / 'a.db'}", auth=f'trusted_authserv_id = "{SERVER}"'
    )
    settings = load_settings(config)
    assert settings.auth.required  # nothing in [auth] says so: the default with [imap]
    store = Store(settings.database_url)
    try:
        Referee.create(store, settings, T0)
        service = Service(settings, store)
        forged = raw_mail(CARLA, "PROPOSE ENACT\nForged.\nEND", message_id="<forged@x>")
        vouched = raw_mail(
            CARLA,
            "PROPOSE ENACT\nBe kind.\nEND",
            message_id="<vouched@example.org>",
            top=verdict("dkim=pass header.d=example.org"),
        )
        stack.deliver(REFEREE, forged)
        service.run_once(T0 + timedelta(hours=1))
        assert service.referee.state.current_proposal is None
        stack.deliver(REFEREE, vouched)
        service.run_once(T0 + timedelta(hours=2))
        proposal = service.referee.state.proposal(301)
        assert proposal is not None and proposal.text == "Be kind."
    finally:
        store.close()
    texts = []
    for message in stack.read(CARLA):
        part = message.get_body(("plain",))
        assert part is not None
        texts.append(" ".join(str(part.get_content()).split()))  # wrapped at 72
    # the named sender gets the one wordless note (the reason stays in the operator's log)
    assert any("could not be shown to come from you" in t for t in texts)
    assert not any("Forged." in t for t in texts)  # nothing of the forger's words
