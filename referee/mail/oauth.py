"""OAuth2 for the mailbox: tokens for XOAUTH2 on IMAP and SMTP (the mail of rules 103-215).

Accounts that refuse passwords (Microsoft 365, Gmail) take an access token instead, obtained
from a refresh token. The refresh token lives in `[oauth2] token_file` (JSON, mode 0600), never
in the config. The first one comes from the device-code flow (RFC 8628), which needs no
browser on the server: `nomic-referee oauth CONFIG` prints a web address and a code, the
operator approves on any device, and the token is saved. Afterwards an access token is
refreshed when it has expired (or its server refused it); a refresh token the provider rotates
is saved at once (written beside the file, then renamed over it, mode 0600). A refresh token
whose expiry the provider states is warned of `warn_days` before, in the log and by `doctor`.

The requests and answers of the token endpoint are made and read by oauthlib; the HTTP
exchange is the standard library's (urllib), with certificates checked (`ca_file`).
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import ssl
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from oauthlib.oauth2 import Client, DeviceClient, OAuth2Error

from referee.config import OAuth2Config
from referee.private import private_folder

log = logging.getLogger("referee.oauth")

MARGIN = timedelta(seconds=60)  # an access token this close to its expiry is renewed first
TIMEOUT = 30.0  # seconds for one HTTP exchange with the provider


class TokenError(ConnectionError):
    """No access token can be had; the message says why and what to run."""


@dataclass(frozen=True)
class Tokens:
    """What the token file holds."""

    refresh_token: str
    access_token: str = ""
    expires_at: datetime | None = None  # of the access token
    refresh_expires_at: datetime | None = None  # of the refresh token, when the provider says
    saved_at: datetime | None = None

    def to_json(self) -> str:
        def when(value: datetime | None) -> str | None:
            return value.isoformat(timespec="seconds") if value else None

        return json.dumps(
            {
                "refresh_token": self.refresh_token,
                "access_token": self.access_token,
                "expires_at": when(self.expires_at),
                "refresh_expires_at": when(self.refresh_expires_at),
                "saved_at": when(self.saved_at),
            },
            indent=2,
        )

    @classmethod
    def from_json(cls, text: str) -> Tokens:
        data = json.loads(text)
        if not isinstance(data, dict) or not isinstance(data.get("refresh_token"), str):
            raise ValueError("no refresh_token in it")

        def when(key: str) -> datetime | None:
            value = data.get(key)
            return datetime.fromisoformat(value) if isinstance(value, str) and value else None

        return cls(
            data["refresh_token"],
            str(data.get("access_token") or ""),
            when("expires_at"),
            when("refresh_expires_at"),
            when("saved_at"),
        )


def sasl_xoauth2(user: str, token: str) -> str:
    """The XOAUTH2 initial response: base64 of `user=U^Aauth=Bearer T^A^A`."""
    return base64.b64encode(f"user={user}\x01auth=Bearer {token}\x01\x01".encode()).decode()


def save(path: Path, tokens: Tokens) -> None:
    """Write the token file whole or not at all: a new file (mode 0600) renamed over it."""
    private_folder(path.parent)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(descriptor, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(tokens.to_json() + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    with contextlib.suppress(OSError):  # the rename itself survives a crash
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def load(path: Path) -> Tokens:
    try:
        return Tokens.from_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise TokenError(
            f"no OAuth2 token file {path}: run nomic-referee oauth CONFIG to sign in"
        ) from exc
    except (OSError, ValueError) as exc:
        raise TokenError(
            f"the OAuth2 token file {path} cannot be read ({exc}): "
            "run nomic-referee oauth CONFIG to sign in again"
        ) from exc


def _post(config: OAuth2Config, url: str, body: str) -> tuple[int, dict[str, Any]]:
    """POST a form; the status and the JSON object answered (an error answer too)."""
    request = urllib.request.Request(
        url,
        data=body.encode("ascii"),
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
        },
        method="POST",
    )
    context = ssl.create_default_context(cafile=config.ca_file or None)
    host = urllib.parse.urlsplit(url).netloc
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT, context=context) as answer:
            status, raw = answer.status, answer.read()
    except urllib.error.HTTPError as exc:  # 400 and 401 carry the OAuth2 error as JSON
        status, raw = exc.code, exc.read()
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        reason = getattr(exc, "reason", exc)
        raise TokenError(f"OAuth2 endpoint {host}: {reason}") from exc
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise TokenError(f"OAuth2 endpoint {host}: HTTP {status}, not a JSON answer") from exc
    if not isinstance(data, dict):
        raise TokenError(f"OAuth2 endpoint {host}: HTTP {status}, not a JSON object")
    return status, data


def _tokens(
    answer: dict[str, Any], now: datetime, previous: Tokens | None, client: Client
) -> Tokens:
    """The token answer read by oauthlib (which raises the provider's error), as Tokens."""
    token = client.parse_request_body_response(json.dumps(answer))
    access = str(token.get("access_token") or "")
    if not access:
        raise TokenError("the provider's answer has no access_token")
    expires_in = token.get("expires_in")
    refresh = str(token.get("refresh_token") or (previous.refresh_token if previous else ""))
    if not refresh:
        raise TokenError(
            "the provider gave no refresh token: add its offline scope to [oauth2] scope "
            "(Microsoft: offline_access; Google gives one to device-flow apps)"
        )
    lasts = token.get("refresh_token_expires_in") or token.get("refresh_expires_in")
    if token.get("refresh_token"):
        refresh_expires = now + timedelta(seconds=int(lasts)) if lasts else None
    else:  # the same refresh token as before: so is its expiry
        refresh_expires = previous.refresh_expires_at if previous else None
    return Tokens(
        refresh,
        access,
        now + timedelta(seconds=int(expires_in)) if expires_in else None,
        refresh_expires,
        now,
    )


def _explained(exc: OAuth2Error, host: str) -> TokenError:
    detail = f"{exc.error}" + (f" ({exc.description})" if exc.description else "")
    if exc.error in ("invalid_grant", "invalid_client", "unauthorized_client"):
        return TokenError(
            f"OAuth2 endpoint {host} refused the refresh token: {detail}; "
            "run nomic-referee oauth CONFIG to sign in again"
        )
    return TokenError(f"OAuth2 endpoint {host}: {detail}")


class Keeper:
    """The tokens of one token file in this process: an access token on demand, refreshed
    when needed, the rotated refresh token saved. Thread-safe: IMAP and SMTP share it."""

    def __init__(self, config: OAuth2Config) -> None:
        self.config = config
        self.lock = threading.Lock()
        self.refused = ""  # an access token the mail server refused: never offered again

    def access_token(self, now: datetime | None = None) -> str:
        """A valid access token, from the file or from the token endpoint."""
        moment = now or datetime.now(UTC)
        with self.lock:
            tokens = load(self.config.token_file)
            fresh = (
                tokens.access_token
                and tokens.access_token != self.refused
                and tokens.expires_at is not None
                and tokens.expires_at - MARGIN > moment
            )
            if fresh:
                return tokens.access_token
            return self._refresh(tokens, moment).access_token

    def refused_token(self, token: str) -> None:
        """The mail server said no to `token` (revoked early): the next call refreshes."""
        with self.lock:
            self.refused = token

    def _refresh(self, tokens: Tokens, now: datetime) -> Tokens:
        c = self.config
        client = Client(c.client_id)
        body = client.prepare_refresh_body(
            refresh_token=tokens.refresh_token,
            scope=c.scope or None,
            client_id=c.client_id,
            **({"client_secret": c.client_secret} if c.client_secret else {}),
        )
        _, answer = _post(c, c.token_url, body)
        try:
            renewed = _tokens(answer, now, tokens, client)
        except OAuth2Error as exc:
            raise _explained(exc, urllib.parse.urlsplit(c.token_url).netloc) from exc
        save(c.token_file, renewed)
        rotated = renewed.refresh_token != tokens.refresh_token
        log.info(
            "OAuth2 access token renewed%s", "; the new refresh token is saved" if rotated else ""
        )
        warning = expiry_warning(c, renewed, now)
        if warning:
            log.warning("%s", warning)
        return renewed


_KEEPERS: dict[Path, Keeper] = {}
_KEEPERS_LOCK = threading.Lock()


def keeper(config: OAuth2Config) -> Keeper:
    """The process's one Keeper of this token file (so IMAP and SMTP never refresh at once)."""
    with _KEEPERS_LOCK:
        found = _KEEPERS.get(config.token_file)
        if found is None or found.config != config:
            found = _KEEPERS[config.token_file] = Keeper(config)
        return found


def expiry_warning(config: OAuth2Config, tokens: Tokens, now: datetime) -> str:
    """A line when the refresh token expires within `warn_days` (or has), else ""."""
    ends = tokens.refresh_expires_at
    if ends is None:
        return ""
    if ends <= now:
        return (
            f"the OAuth2 refresh token in {config.token_file} expired on {ends:%Y-%m-%d %H:%M} "
            "UTC: run nomic-referee oauth CONFIG to sign in again"
        )
    if ends - now <= timedelta(days=config.warn_days):
        left = ends - now
        return (
            f"the OAuth2 refresh token in {config.token_file} expires on {ends:%Y-%m-%d %H:%M} "
            f"UTC (in {left.days} d {left.seconds // 3600} h): run nomic-referee oauth CONFIG "
            "before then"
        )
    return ""


@dataclass(frozen=True)
class DeviceCode:
    """What the operator is shown: where to go and the code to type there."""

    verification_uri: str
    user_code: str
    verification_uri_complete: str
    expires_in: int
    interval: int
    device_code: str


def start_device_flow(config: OAuth2Config) -> DeviceCode:
    """Ask the provider for a device code (RFC 8628 section 3.1)."""
    form = [("client_id", config.client_id)]
    if config.scope:
        form.append(("scope", config.scope))
    if config.client_secret:
        form.append(("client_secret", config.client_secret))
    status, answer = _post(config, config.device_url, urllib.parse.urlencode(form))
    host = urllib.parse.urlsplit(config.device_url).netloc
    if "error" in answer or status >= 400:
        detail = answer.get("error_description") or answer.get("error") or f"HTTP {status}"
        raise TokenError(f"OAuth2 device endpoint {host}: {detail}")
    # RFC 8628 says verification_uri; Google says verification_url
    uri = answer.get("verification_uri") or answer.get("verification_url")
    if not isinstance(uri, str) or not answer.get("device_code") or not answer.get("user_code"):
        raise TokenError(f"OAuth2 device endpoint {host}: no device_code, user_code or URI")
    return DeviceCode(
        uri,
        str(answer["user_code"]),
        str(answer.get("verification_uri_complete") or ""),
        int(answer.get("expires_in") or 900),
        max(1, int(answer.get("interval") or 5)),
        str(answer["device_code"]),
    )


def finish_device_flow(
    config: OAuth2Config,
    code: DeviceCode,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> Tokens:
    """Poll the token endpoint until the operator approves (RFC 8628 section 3.4-3.5); save
    and return the tokens. `slow_down` adds 5 s to the interval, as the RFC says."""
    client = DeviceClient(config.client_id)
    host = urllib.parse.urlsplit(config.token_url).netloc
    interval = code.interval
    deadline = clock() + timedelta(seconds=code.expires_in)
    while True:
        sleep(interval)
        body = client.prepare_request_body(
            code.device_code,
            include_client_id=True,
            **({"client_secret": config.client_secret} if config.client_secret else {}),
        )
        _, answer = _post(config, config.token_url, body)
        try:
            tokens = _tokens(answer, clock(), None, client)
        except OAuth2Error as exc:
            if exc.error == "authorization_pending" and clock() < deadline:
                continue
            if exc.error == "slow_down" and clock() < deadline:
                interval += 5
                continue
            if exc.error in ("authorization_pending", "slow_down", "expired_token"):
                raise TokenError("the code expired before it was approved: run it again") from exc
            if exc.error == "access_denied":
                raise TokenError("the sign-in was refused at the provider") from exc
            raise _explained(exc, host) from exc
        save(config.token_file, tokens)
        return tokens


def check(config: OAuth2Config, now: datetime) -> tuple[Tokens, str]:
    """For `doctor`: an access token can be had now (refreshing when needed); the tokens and
    the expiry warning. Raises TokenError with the fix."""
    access = keeper(config).access_token(now)
    tokens = load(config.token_file)
    return replace(tokens, access_token=access), expiry_warning(config, tokens, now)
