"""Who really sent a mail: DKIM aligned with From (dkimpy), or a trusted receiving server's word.

Serves every rule a player acts under (103-215): only registered players are obeyed, and with
`require_dkim` a forged From is refused. Two ways to pass: a DKIM signature that verifies on the
raw message and whose `d=` domain is the From domain or a parent of it (relaxed alignment), or
an `Authentication-Results` header written by the configured server (`trusted_authserv_id`) that
reports such a DKIM pass or a DMARC pass for the From domain.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from email.parser import BytesHeaderParser
from email.policy import compat32

import dkim

from referee.config import AuthConfig

log = logging.getLogger("referee.auth")

DnsLookup = Callable[..., bytes | None]


@dataclass(frozen=True)
class Authentication:
    ok: bool
    why: str  # how it passed, or why it did not


def aligned(signer: str, from_domain: str) -> bool:
    signer, from_domain = signer.lower().strip("."), from_domain.lower().strip(".")
    return bool(signer) and (from_domain == signer or from_domain.endswith("." + signer))


def _trusted_results(raw: bytes, authserv_id: str, from_domain: str) -> Authentication | None:
    headers = BytesHeaderParser(policy=compat32).parsebytes(raw)
    for value in headers.get_all("Authentication-Results", []):
        text = " ".join(str(value).split())
        server, _, results = text.partition(";")
        if server.strip().split()[0:1] != [authserv_id]:
            continue  # written by someone else: could be forged, so never trusted
        for result in results.split(";"):
            method = re.match(r"\s*(dkim|dmarc)\s*=\s*(\w+)", result)
            if not method or method.group(2).lower() != "pass":
                continue
            domain = re.search(r"header\.(?:d|from)\s*=\s*([^\s;]+)", result)
            if domain and aligned(domain.group(1), from_domain):
                return Authentication(True, f"{method.group(1)}=pass by {authserv_id}")
    return None


def _dkim(raw: bytes, from_domain: str, dns: DnsLookup | None) -> Authentication:
    headers = BytesHeaderParser(policy=compat32).parsebytes(raw)
    count = len(headers.get_all("DKIM-Signature", []))
    if count == 0:
        return Authentication(False, "no DKIM signature")
    reasons = []
    for index in range(count):
        checker = dkim.DKIM(raw)
        try:
            valid = checker.verify(idx=index, dnsfunc=dns) if dns else checker.verify(idx=index)
        except dkim.DKIMException as exc:
            reasons.append(f"DKIM signature does not verify ({exc})")
            continue
        signer = (checker.domain or b"").decode("ascii", "replace")
        if valid and aligned(signer, from_domain):
            return Authentication(True, f"DKIM d={signer}")
        reasons.append(
            f"DKIM d={signer} "
            + ("not aligned with " + from_domain if valid else "does not verify")
        )
    return Authentication(False, "; ".join(reasons))


def authenticate(
    raw: bytes, sender: str, config: AuthConfig, dns: DnsLookup | None = None
) -> Authentication:
    """Whether the From address can be believed, under the operator's settings."""
    if not config.require_dkim:
        return Authentication(True, "not required")
    from_domain = sender.rpartition("@")[2]
    if config.trusted_authserv_id:
        trusted = _trusted_results(raw, config.trusted_authserv_id, from_domain)
        if trusted is not None:
            return trusted
    return _dkim(raw, from_domain, dns)
