"""OAuth2 for the mailbox (XOAUTH2) against a real Dovecot whose `oauth2` passdb asks a local
provider, and an SMTP server taking XOAUTH2 only: the device-code sign-in from the CLI, the
token file (0600, rotated refresh tokens saved), `doctor`, a `run` answering a player, the
expiry warning, a revoked token, and read-only commands that need no secret."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from referee.config import ConfigError, load_settings
from referee.mail import oauth
from referee.mail.imap import ImapError, ImapInbox
from tests.conftest import PLAYER_ADDRESSES, REFEREE, live_config
from tests.helpers import ADA, mail
from tests.mailstack import PASSWORD, MailStack
from tests.oauth_provider import SECRET, Provider, oauth_stack, provider, xoauth2_smtp

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
ENV = {**os.environ, "NOMIC_OAUTH_SECRET": SECRET, "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Provider, MailStack, int]]:
    """The provider, Dovecot taking its tokens, and an XOAUTH2 SMTP server delivering there."""
    root = tmp_path_factory.mktemp("oauth")
    with provider(REFEREE) as found:
        stack = oauth_stack(root / "stack", [REFEREE, *PLAYER_ADDRESSES], found)
        stack.start_imap()
        try:
            with xoauth2_smtp(found, stack.handler) as (port, _):
                yield found, stack, port
        finally:
            stack.stop()


def oauth_config(folder: Path, found: Provider, stack: MailStack, smtp_port: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = live_config(folder, stack, f"sqlite:///{folder / 'nomic.db'}")
    text = path.read_text().replace(f'password = "{PASSWORD}"\n', 'auth = "oauth2"\n')
    text = text.replace(
        f'port = {stack.smtp_port}\nsecurity = "none"',
        f'port = {smtp_port}\nsecurity = "none"\nusername = "{REFEREE}"\nauth = "oauth2"',
    )
    path.write_text(text + found.config(folder / "token.json"))
    return path


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "referee", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env or ENV,
        timeout=180,
    )


def sign_in(config: Path, found: Provider) -> subprocess.CompletedProcess[str]:
    """`nomic-referee oauth CONFIG`, the code typed in at the provider as its owner would."""
    process = subprocess.Popen(
        [sys.executable, "-m", "referee", "oauth", str(config)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=ENV,
    )
    assert process.stdout is not None
    shown = []
    for line in process.stdout:
        shown.append(line)
        if line.startswith("and enter the code "):
            found.approve(line.split()[-1])
            break
    out, err = process.communicate(timeout=60)
    return subprocess.CompletedProcess(process.args, process.returncode, "".join(shown) + out, err)


def initialised(folder: Path, found: Provider, stack: MailStack, smtp_port: int) -> Path:
    config = oauth_config(folder, found, stack, smtp_port)
    done = cli("init", str(config))
    assert done.returncode == 0, done.stderr
    return config


def test_sign_in_by_device_code_then_doctor_and_a_run_over_xoauth2(
    world: tuple[Provider, MailStack, int], tmp_path: Path
) -> None:
    found, stack, smtp_port = world
    config = initialised(tmp_path, found, stack, smtp_port)
    token_file = tmp_path / "token.json"
    before = cli("doctor", str(config))
    assert before.returncode == 1
    assert f"FAIL oauth2: no token file {token_file}; fix: nomic-referee oauth CONFIG" in (
        before.stdout
    )
    signed = sign_in(config, found)
    assert signed.returncode == 0, signed.stdout + signed.stderr
    assert f"open {found.url}/approve" in signed.stdout
    assert f"the refresh token is saved in {token_file}" in signed.stdout
    assert token_file.stat().st_mode & 0o777 == 0o600
    saved = json.loads(token_file.read_text())
    assert saved["refresh_token"] in found.refresh and saved["access_token"] in found.access
    assert found.grants[-1] == "urn:ietf:params:oauth:grant-type:device_code"

    doctor = cli("doctor", "--create-folders", str(config))
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    lines = doctor.stdout.splitlines()
    assert any(line.startswith(f"OK   oauth2: {token_file}: an access token") for line in lines)
    assert any(line.startswith("OK   imap:") and "XOAUTH2" in line for line in lines), lines
    assert f"OK   smtp login: logged in as {REFEREE} (XOAUTH2)" in lines
    assert found.introspected > 0  # Dovecot asked the provider about the token

    asked = "<oauth-status@example.org>"
    stack.deliver(REFEREE, mail(ADA, "STATUS", message_id=asked).replace(b"\n", b"\r\n"))
    run = cli("run", "--once", str(config))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "processed 1 mail" in run.stdout and "deferred 0, undeliverable 0" in run.stdout
    assert asked in [str(m["In-Reply-To"]) for m in stack.read(ADA)]  # sent over XOAUTH2


def test_an_expired_access_token_is_renewed_and_the_rotated_refresh_token_saved(
    world: tuple[Provider, MailStack, int], tmp_path: Path
) -> None:
    found, stack, smtp_port = world
    config = initialised(tmp_path, found, stack, smtp_port)
    assert sign_in(config, found).returncode == 0
    token_file = tmp_path / "token.json"
    first = oauth.load(token_file)
    oauth.save(token_file, replace(first, expires_at=datetime.now(UTC) - timedelta(minutes=5)))
    doctor = cli("doctor", "--create-folders", str(config))
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    renewed = oauth.load(token_file)
    assert found.grants[-1] == "refresh_token"
    assert renewed.refresh_token != first.refresh_token  # rotated, and the new one kept
    assert first.refresh_token not in found.refresh and renewed.refresh_token in found.refresh
    assert renewed.access_token != first.access_token
    assert token_file.stat().st_mode & 0o777 == 0o600
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_an_access_token_the_server_refuses_is_replaced_at_the_next_login(
    world: tuple[Provider, MailStack, int], tmp_path: Path
) -> None:
    found, stack, smtp_port = world
    config = initialised(tmp_path, found, stack, smtp_port)
    assert sign_in(config, found).returncode == 0
    settings = load_settings(config, secrets=False)
    assert settings.imap is not None and settings.oauth2 is not None
    settings = replace(
        settings, imap=replace(settings.imap, oauth2=replace(settings.oauth2, client_secret=SECRET))
    )
    assert settings.imap is not None
    with found.lock:
        found.access.clear()  # revoked early at the provider; the refresh token still good

    async def twice() -> str:
        assert settings.imap is not None
        inbox = ImapInbox(settings.imap)
        with pytest.raises(ImapError) as refused:
            await asyncio.wait_for(inbox.connect(create_folders=False), 20)
        await inbox.close()
        again = ImapInbox(settings.imap)
        await asyncio.wait_for(again.connect(create_folders=False), 20)
        await again.close()
        return str(refused.value)

    refusal = asyncio.run(twice())
    assert "AUTHENTICATE XOAUTH2" in refusal and f"IMAP server 127.0.0.1:{stack.imaps_port}" in (
        refusal
    )
    assert found.grants[-1] == "refresh_token"


def test_a_refresh_token_near_its_end_is_warned_of_and_a_revoked_one_names_the_fix(
    tmp_path: Path,
) -> None:
    with provider(REFEREE, refresh_lasts=3 * 86400) as found:
        stack = oauth_stack(tmp_path / "stack", [REFEREE, *PLAYER_ADDRESSES], found)
        stack.start_imap()
        try:
            with xoauth2_smtp(found, stack.handler) as (smtp_port, _):
                config = initialised(tmp_path / "game", found, stack, smtp_port)
                signed = sign_in(config, found)
                assert signed.returncode == 0
                assert "expires on" in signed.stderr and "(in 2 d 23 h)" in signed.stderr
                doctor = cli("doctor", "--create-folders", str(config))
                assert doctor.returncode == 0, doctor.stdout + doctor.stderr
                warned = [ln for ln in doctor.stdout.splitlines() if ln.startswith("WARN oauth2")]
                assert warned and "expires on" in warned[0], doctor.stdout
                assert warned[0].endswith("before then; fix: nomic-referee oauth CONFIG")
                run = cli("run", "--once", str(config))
                assert run.returncode == 0 and "the OAuth2 refresh token in" in run.stderr

                found.revoke_all()
                token_file = tmp_path / "game" / "token.json"
                token = oauth.load(token_file)
                oauth.save(token_file, replace(token, expires_at=None))  # must refresh
                doctor = cli("doctor", str(config))
                assert doctor.returncode == 1
                assert (
                    "FAIL oauth2: OAuth2 endpoint "
                    f"127.0.0.1:{found.port} refused the refresh token: invalid_grant (revoked)"
                ) in doctor.stdout
        finally:
            stack.stop()


def test_commands_that_never_log_in_ask_for_no_secret(
    world: tuple[Provider, MailStack, int], tmp_path: Path
) -> None:
    found, stack, smtp_port = world
    config = oauth_config(tmp_path, found, stack, smtp_port)
    bare = {k: v for k, v in ENV.items() if k != "NOMIC_OAUTH_SECRET"}
    assert cli("init", str(config), env=bare).returncode == 0
    status = cli("status", str(config), env=bare)
    assert status.returncode == 0, status.stderr
    doctor = cli("doctor", str(config), env=bare)
    assert doctor.returncode == 2
    assert "client_secret_env: environment variable NOMIC_OAUTH_SECRET is not set" in (
        doctor.stderr
    )
    signing = cli("oauth", str(config), env=bare)
    assert signing.returncode == 2 and "NOMIC_OAUTH_SECRET is not set" in signing.stderr


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("\n[oauth2]\n", "\n"), "[imap] auth = 'oauth2' needs an [oauth2] section"),
        (('auth = "oauth2"\n', 'auth = "oauth2"\npassword = "x"\n'), "takes no password"),
        (('auth = "oauth2"\n', 'auth = "kerberos"\n'), "auth must be 'password' or 'oauth2'"),
        (("http://127.0.0.1", "http://auth.example.org"), "must be an https URL"),
        (('client_id = "', 'client_idx = "'), "[oauth2]: unknown key 'client_idx'"),
    ],
)
def test_the_oauth2_config_says_what_is_wrong(
    change: tuple[str, str], message: str, tmp_path: Path
) -> None:
    found = Provider(REFEREE)
    found.server.server_close()
    stack_like = type("S", (), {"imaps_port": 1, "imap_port": 2, "smtp_port": 3, "ca_file": ""})
    config = oauth_config(tmp_path, found, stack_like(), 3)
    text = config.read_text()
    if change[0] == "\n[oauth2]\n":  # the section gone, not merely renamed
        text = text[: text.index(change[0])] + "\n"
    config.write_text(text.replace(*change, 1))
    with pytest.raises(ConfigError) as caught:
        load_settings(config, secrets=False)
    assert message in str(caught.value) and str(config) in str(caught.value)
