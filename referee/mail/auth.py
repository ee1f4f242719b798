"""Whether the sender a mail names in From really sent it: the receiving server's word or DKIM.

Serves every rule a player acts under (103-215): a vote, an award or a ruling counts only from
the player who sent it. The From address itself is decided once, in `parse.sender_of`; this
module only says whether it can be believed. Two ways to pass, tried in order:

1. The `Authentication-Results` header (RFC 8601) that the operator's receiving server added,
   named by its authserv-id in `[auth] trusted_authserv_id`. Only the topmost header carrying
   that id counts (RFC 8601 sections 5 and 7: the server prepends its own; any copy below it
   came with the message and may be forged, any header above it was added after it), and it
   must stand above the `Received` header in which that server took the mail in: the topmost
   `Received` line written by any trusted host must name it (`by <authserv-id>`); with no such
   line the verdict is not believed, since nothing shows it was added here. It passes on
   `dkim=pass` for a domain aligned with From, or `dmarc=pass` for the From domain itself.
2. A DKIM signature verified here (dkimpy, on the raw bytes) whose `d=` is aligned with the
   From domain, that covers the whole body (no `l=`) and signs From, Subject, Date and
   Message-ID; each of those must appear once (parse refuses a mail with two).

A DKIM identity (`i=`, or `header.i` in the server's results) that names a mailbox must name
the From mailbox: `dario@example.org` signs for Dario, not for Carla on the same domain. The
same holds for a server trusted through a wildcard (`*.example.net`): only the verdict of the
host that took the mail in counts, the one the topmost trusted `Received` line names.

Alignment is DMARC's relaxed alignment: the same organisational domain, found with the public
suffix list (`publicsuffixlist`), so `d=org` or `d=co.uk` is never aligned with anything.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from email.message import Message
from email.parser import BytesHeaderParser
from email.policy import compat32

import authres
import dkim
from dkim.util import InvalidTagValueList, parse_tag_value
from publicsuffixlist import PublicSuffixList

from referee.config import AuthConfig, Settings

log = logging.getLogger("referee.auth")

DnsLookup = Callable[..., bytes | None]
# A signature must cover each of these; To, so that a mail to someone else cannot be resent here.
SIGNED = ("from", "to", "subject", "date", "message-id")
_PSL = PublicSuffixList()


@dataclass(frozen=True)
class Authentication:
    ok: bool
    why: str  # how it passed, or why it did not


def organisational_domain(domain: str) -> str | None:
    """example.org for mail.example.org; None for a public suffix such as org or co.uk."""
    cleaned = domain.strip().strip(".").lower()
    if not cleaned or not cleaned.isascii():
        return None
    found = _PSL.privatesuffix(cleaned)
    return str(found) if found else None


def aligned(signer: str, from_domain: str) -> bool:
    """DMARC relaxed alignment: both domains under the same organisational domain."""
    signer_org = organisational_domain(signer)
    return signer_org is not None and signer_org == organisational_domain(from_domain)


def authenticate(
    raw: bytes, sender: str, config: AuthConfig, dns: DnsLookup | None = None
) -> Authentication:
    """Whether the From address can be believed, under the operator's settings."""
    if not config.required:
        return Authentication(True, "not required")
    from_domain = sender.rpartition("@")[2].lower()
    headers = BytesHeaderParser(policy=compat32).parsebytes(raw)
    reasons: list[str] = []
    if config.trusted_authserv_id:
        trusted = trusted_results(headers, config.trusted_authserv_id, from_domain, sender)
        if trusted.ok:
            return trusted
        reasons.append(trusted.why)
    if config.verify_dkim:
        own = verify_dkim(raw, headers, from_domain, dns, sender)
        if own.ok:
            return own
        reasons.append(own.why)
    return Authentication(False, "; ".join(reasons) or "no way to authenticate is configured")


# ----- the receiving server's Authentication-Results ----------------------------------------

_AUTHSERV = re.compile(r"\s*(?:\([^()]*\)\s*)*([^\s;()]+)")
_BY = re.compile(r"\bby\s+([^\s;()]+)", re.I)


def _authserv_id(value: str) -> str:
    found = _AUTHSERV.match(value)
    return found.group(1).lower() if found else ""


def _matches(name: str, trusted: Sequence[str]) -> bool:
    """An exact id, or `*.example.net` for any host under it (Fastmail's mx1..mx9)."""
    for pattern in trusted:
        pattern = pattern.lower()
        if pattern.startswith("*.") and name.endswith(pattern[1:]):
            return True
        if name == pattern:
            return True
    return False


def same_mailbox(agent: str, sender: str) -> bool:
    """Whether a DKIM identity (`i=`, `header.i`) may be the From address: `@example.org`
    (the domain only) may; `dario@example.org` is Dario, never Carla (RFC 6376 3.5)."""
    local, at, _domain = agent.strip().lower().rpartition("@")
    if not at or not local:
        return True
    return local == sender.lower().rpartition("@")[0]


def trusted_results(
    headers: Message, trusted: Sequence[str], from_domain: str, sender: str = ""
) -> Authentication:
    """The verdict of the topmost Authentication-Results written by a trusted server."""
    items = [(name.lower(), " ".join(str(value).split())) for name, value in headers.raw_items()]
    ours = [
        (index, value)
        for index, (name, value) in enumerate(items)
        if name == "authentication-results" and _matches(_authserv_id(value), trusted)
    ]
    if not ours:
        return Authentication(False, f"no Authentication-Results from {', '.join(trusted)}")
    index, value = ours[0]
    server = _authserv_id(value)
    # The verdict counts only from the host that took the mail in: the topmost Received line
    # written by any trusted host must name it, and the verdict must stand above that line.
    # One below it, or one with no such line at all, may have come with the message.
    taken = [
        (i, host.lower())
        for i, (name, text) in enumerate(items)
        if name == "received"
        for host in _BY.findall(text)
        if _matches(host.lower(), trusted)
    ]
    if not taken:
        return Authentication(
            False,
            f"no Received line shows {server} taking the mail in, so its "
            "Authentication-Results may have come with the mail",
        )
    line, host = taken[0]
    if host != server:
        return Authentication(
            False, f"the Authentication-Results of {server} were not added by {host}"
        )
    if index > line:
        return Authentication(False, f"the Authentication-Results of {server} came with the mail")
    try:
        parsed = authres.AuthenticationResultsHeader.parse_value(value)
    except (authres.AuthResError, ValueError, IndexError) as exc:
        return Authentication(
            False, f"the Authentication-Results of {server} cannot be read: {exc}"
        )
    seen: list[str] = []
    dmarc = False
    foreign = False  # a passing DKIM identity of another mailbox: what made DMARC pass, maybe
    for result in parsed.results:
        method, verdict = str(result.method).lower(), str(result.result).lower()
        values = {
            f"{p.type}.{p.name}".lower(): str(p.value or "").lower() for p in result.properties
        }
        seen.append(f"{method}={verdict}")
        if verdict != "pass":
            continue
        if method == "dkim":
            signer = values.get("header.d") or values.get("header.i", "").rpartition("@")[2]
            agent = values.get("header.i", "")
            if sender and not same_mailbox(agent, sender):
                seen[-1] = f"dkim=pass for {agent}, another mailbox"
                foreign = True
                continue
            if signer and aligned(signer, from_domain):
                return Authentication(True, f"dkim=pass d={signer} by {server}")
        if method == "dmarc" and values.get("header.from", "") == from_domain:
            dmarc = True
    if dmarc and not foreign:  # a DMARC pass that another mailbox's signature may have earned
        return Authentication(True, f"dmarc=pass by {server}")  # is no pass for this one
    verdicts = ", ".join(seen) or "no results"
    return Authentication(False, f"{server} reports {verdicts}, none aligned with {from_domain}")


_DKIM_NAME = re.compile(rb"(?i)dkim-signature")


def signed_headers(raw: bytes, from_domain: str) -> frozenset[str] | None:
    """The headers every DKIM signature aligned with From lists in `h=` (lower-cased, those
    all of them sign); None when the mail carries no such signature. A header none of them
    signs may have been added by whoever resent the mail: a Cc naming this game, say."""
    if _DKIM_NAME.search(raw) is None:  # no signature anywhere: no need to parse (issue 19)
        return None
    headers = BytesHeaderParser(policy=compat32).parsebytes(raw)
    found: frozenset[str] | None = None
    for value in headers.get_all("DKIM-Signature", []):
        try:
            tags = parse_tag_value(" ".join(str(value).split()).encode("ascii", "replace"))
        except (InvalidTagValueList, ValueError):
            continue
        if not aligned(tags.get(b"d", b"").decode("ascii", "replace"), from_domain):
            continue
        listed = tags.get(b"h", b"").decode("ascii", "replace").split(":")
        names = frozenset(h.strip().lower() for h in listed)
        found = names if found is None else found & names
    return found


# ----- DKIM verified here -------------------------------------------------------------------


def verify_dkim(
    raw: bytes, headers: Message, from_domain: str, dns: DnsLookup | None, sender: str = ""
) -> Authentication:
    signatures = headers.get_all("DKIM-Signature", [])
    if not signatures:
        return Authentication(False, "no DKIM signature")
    reasons = []
    for index, value in enumerate(signatures):
        try:
            tags = parse_tag_value(" ".join(str(value).split()).encode("ascii", "replace"))
        except (InvalidTagValueList, ValueError) as exc:
            reasons.append(f"DKIM signature cannot be read ({exc})")
            continue
        signer = tags.get(b"d", b"").decode("ascii", "replace").lower()
        if b"l" in tags:
            reasons.append(f"DKIM d={signer} signs only part of the body (l=)")
            continue
        signed = {
            h.strip().lower() for h in tags.get(b"h", b"").decode("ascii", "replace").split(":")
        }
        missing = [name for name in SIGNED if name not in signed]
        if missing:
            reasons.append(f"DKIM d={signer} does not sign {', '.join(missing)}")
            continue
        if not aligned(signer, from_domain):
            reasons.append(f"DKIM d={signer} not aligned with {from_domain}")
            continue
        agent = tags.get(b"i", b"").decode("ascii", "replace")
        if sender and not same_mailbox(agent, sender):
            reasons.append(f"DKIM i={agent} names another mailbox")
            continue
        checker = dkim.DKIM(raw)
        try:
            valid = checker.verify(idx=index, dnsfunc=dns) if dns else checker.verify(idx=index)
        except dkim.DKIMException as exc:
            reasons.append(f"DKIM d={signer} does not verify ({exc})")
            continue
        if valid:
            return Authentication(True, f"DKIM d={signer}")
        reasons.append(f"DKIM d={signer} does not verify")
    return Authentication(False, "; ".join(reasons))


def warning(settings: Settings) -> str | None:
    """The line the service logs at start when anyone can act as any player, else None."""
    if settings.auth.required:
        return None
    why = (
        "[auth] required = false"
        if settings.imap is not None or settings.lmtp is not None
        else "no [imap] or [lmtp] section and [auth] required not set"
    )
    return (
        f"SENDER AUTHENTICATION IS OFF ({why}): anyone who writes a player's address in From "
        "can vote, propose and rule as that player. See docs/operations.md."
    )
