"""Test kit for OAuth2: a small provider on a loopback port, and an SMTP server wanting XOAUTH2.

The provider (Python's http.server in a thread) has the endpoints a real one has: device
authorization and token (RFC 8628 and 6749: the device_code and refresh_token grants, with
rotated refresh tokens), a page where the account's owner enters the user code (`approve`),
and token introspection (RFC 7662) for Dovecot's `oauth2` passdb. The SMTP server is aiosmtpd
with an XOAUTH2 mechanism that asks the same provider whether a token is good.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP as SMTPServer
from aiosmtpd.smtp import AuthResult

from tests.mailstack import MailStack, free_port

CLIENT_ID = "nomic-referee-test"
SECRET = "s3cret-of-the-app"


class Provider:
    """The provider's state: device codes, live refresh and access tokens, and what was asked."""

    def __init__(self, user: str, refresh_lasts: int | None = None) -> None:
        self.user = user
        self.refresh_lasts = refresh_lasts  # seconds, told as refresh_token_expires_in
        self.lock = threading.Lock()
        self.devices: dict[str, dict[str, Any]] = {}  # device_code -> user_code, approved
        self.refresh: set[str] = set()
        self.access: set[str] = set()
        self.grants: list[str] = []  # each grant_type asked of /token, in order
        self.introspected = 0
        self.port = free_port()
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), _handler(self))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def config(self, token_file: Path, warn_days: int = 14) -> str:
        """The [oauth2] section for this provider."""
        return (
            "\n[oauth2]\n"
            f'token_url = "{self.url}/token"\n'
            f'device_url = "{self.url}/device"\n'
            f'client_id = "{CLIENT_ID}"\n'
            'client_secret_env = "NOMIC_OAUTH_SECRET"\n'
            'scope = "mail offline_access"\n'
            f'token_file = "{token_file}"\n'
            f"warn_days = {warn_days}\n"
        )

    def approve(self, user_code: str) -> None:
        """What the account's owner does on the verification page: enter the code."""
        body = urllib.parse.urlencode({"user_code": user_code}).encode()
        with urllib.request.urlopen(f"{self.url}/approve", body, timeout=10) as answer:
            assert answer.status == 200

    def revoke_all(self) -> None:
        with self.lock:
            self.refresh.clear()
            self.access.clear()

    def good(self, token: str, user: str) -> bool:
        with self.lock:
            return token in self.access and user == self.user

    def _issue(self) -> dict[str, Any]:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        self.access.add(access)
        self.refresh.add(refresh)
        answer: dict[str, Any] = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": 3600,
            "refresh_token": refresh,
            "scope": "mail offline_access",
        }
        if self.refresh_lasts is not None:
            answer["refresh_token_expires_in"] = self.refresh_lasts
        return answer

    def token(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        grant = form.get("grant_type", "")
        with self.lock:
            self.grants.append(grant)
            if form.get("client_id") != CLIENT_ID or form.get("client_secret") != SECRET:
                return 401, {"error": "invalid_client"}
            if grant == "urn:ietf:params:oauth:grant-type:device_code":
                device = self.devices.get(form.get("device_code", ""))
                if device is None:
                    return 400, {"error": "expired_token"}
                if not device["approved"]:
                    return 400, {"error": "authorization_pending"}
                del self.devices[form["device_code"]]
                return 200, self._issue()
            if grant == "refresh_token":
                old = form.get("refresh_token", "")
                if old not in self.refresh:
                    return 400, {"error": "invalid_grant", "error_description": "revoked"}
                self.refresh.discard(old)  # rotated: the old one is good no more
                return 200, self._issue()
            return 400, {"error": "unsupported_grant_type"}

    def device(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if form.get("client_id") != CLIENT_ID:
            return 400, {"error": "invalid_client"}
        code, user_code = secrets.token_urlsafe(16), secrets.token_hex(4).upper()
        with self.lock:
            self.devices[code] = {"user_code": user_code, "approved": False}
        return 200, {
            "device_code": code,
            "user_code": user_code,
            "verification_uri": f"{self.url}/approve",
            "expires_in": 600,
            "interval": 1,
        }

    def approved(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        with self.lock:
            for device in self.devices.values():
                if device["user_code"] == form.get("user_code"):
                    device["approved"] = True
                    return 200, {"approved": True}
        return 404, {"error": "no such code"}

    def introspect(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        with self.lock:
            self.introspected += 1
            if form.get("token") in self.access:
                return 200, {"active": "true", "username": self.user}
        return 200, {"active": "false"}


def _handler(provider: Provider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
            route = {
                "/token": provider.token,
                "/device": provider.device,
                "/approve": provider.approved,
                "/introspect": provider.introspect,
            }.get(self.path)
            status, answer = route(form) if route else (404, {"error": "not found"})
            body = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


@contextmanager
def provider(user: str, refresh_lasts: int | None = None) -> Iterator[Provider]:
    found = Provider(user, refresh_lasts)
    found.thread.start()
    try:
        yield found
    finally:
        found.server.shutdown()
        found.server.server_close()


def dovecot_oauth2(stack_root: Path, provider: Provider) -> str:
    """The extra Dovecot config: XOAUTH2 checked by introspection at the provider."""
    args = stack_root / "oauth2.conf.ext"
    args.write_text(
        "introspection_mode = post\n"
        f"introspection_url = {provider.url}/introspect\n"
        "force_introspection = yes\n"
        "username_attribute = username\n"
        "active_attribute = active\n"
        "active_value = true\n",
        encoding="utf-8",
    )
    return (
        "auth_mechanisms = plain login xoauth2 oauthbearer\n"
        "passdb {\n"
        "  driver = oauth2\n"
        "  mechanisms = xoauth2 oauthbearer\n"
        f"  args = {args}\n"
        "}\n"
    )


def oauth_stack(root: Path, users: list[str], found: Provider) -> MailStack:
    """A MailStack whose Dovecot also takes XOAUTH2 tokens of `found`."""
    stack = MailStack(root, users)
    stack.config.write_text(
        stack.config.read_text(encoding="utf-8") + dovecot_oauth2(stack.root, found),
        encoding="utf-8",
    )
    return stack


class _Xoauth2Delivering:
    """aiosmtpd handler: AUTH XOAUTH2 checked at the provider; mail delivered by `inner`."""

    def __init__(self, found: Provider, inner: Any) -> None:
        self.provider = found
        self.inner = inner
        self.logins: list[str] = []

    async def auth_XOAUTH2(self, server: SMTPServer, args: list[str]) -> AuthResult:
        blob = args[1] if len(args) > 1 else ""
        fields = dict(
            part.split("=", 1)
            for part in base64.b64decode(blob).decode().split("\x01")
            if "=" in part
        )
        user, token = fields.get("user", ""), fields.get("auth", "").removeprefix("Bearer ")
        if self.provider.good(token, user):
            self.logins.append(user)
            return AuthResult(success=True, auth_data=user)
        error = json.dumps({"status": "401", "schemes": "bearer", "scope": "mail"})
        await server.challenge_auth(error)  # the client answers with an empty line
        return AuthResult(success=False)

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        return str(await self.inner.handle_DATA(server, session, envelope))


def _no_password(*_: object) -> AuthResult:
    return AuthResult(success=False)


@contextmanager
def xoauth2_smtp(found: Provider, inner: Any) -> Iterator[tuple[int, _Xoauth2Delivering]]:
    """An SMTP server on a free port that takes mail only after AUTH XOAUTH2."""
    handler = _Xoauth2Delivering(found, inner)
    port = free_port()
    controller = Controller(
        handler,
        hostname="127.0.0.1",
        port=port,
        authenticator=_no_password,
        auth_required=True,
        auth_require_tls=False,  # plain text on loopback, as the tests may
        auth_exclude_mechanism=["LOGIN", "PLAIN"],
    )
    controller.start()
    try:
        yield port, handler
    finally:
        controller.stop()
