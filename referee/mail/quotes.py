"""Strip what a reply quotes and what a client appends, so only the player's own words remain.

Serves the mail commands of rules 103-215: a command quoted from an earlier mail must never be
obeyed twice. Handles `>` lines, "On ... wrote:" (Gmail, Apple Mail, Thunderbird), "Il giorno
... ha scritto:" and "Il ... ha scritto:" (Italian clients), Outlook's unprefixed history under a
separator or a `From:/Sent:` (`Da:/Inviato:`) block, "-----Original Message-----", signature
lines (`-- `) and mobile footers ("Sent from my iPhone", "Inviato da iPhone", ...).
"""

from __future__ import annotations

import re

_ATTRIBUTION = (
    re.compile(r"^\s*On\b.*\bwrote:\s*$", re.I),
    re.compile(r"^\s*Il\b.*\bha scritto:\s*$", re.I),
    re.compile(r"^\s*Le\b.*\ba écrit\s*:\s*$", re.I),
    re.compile(r"^\s*Am\b.*\bschrieb\b.*:\s*$", re.I),
)
_ATTRIBUTION_START = re.compile(r"^\s*(On|Il|Il giorno)\s", re.I)
_ATTRIBUTION_END = re.compile(r"(wrote|ha scritto)\s*:\s*$", re.I)
_SEPARATORS = (
    re.compile(r"^\s*_{8,}\s*$"),
    re.compile(
        r"^\s*-{3,}\s*(Original Message|Messaggio originale|Forwarded message|"
        r"Messaggio inoltrato)\s*-{3,}\s*$",
        re.I,
    ),
    re.compile(r"^\s*Begin forwarded message:\s*$", re.I),
)
_HEADER_FROM = re.compile(r"^\s*\*?(From|Da)\s*:\*?\s", re.I)
_HEADER_NEXT = re.compile(r"^\s*\*?(Sent|Date|To|Subject|Inviato|Data|A|Oggetto|Cc)\s*:\*?\s", re.I)
_FOOTERS = re.compile(
    r"^\s*(Sent from my\b|Sent from Mail for\b|Sent from Outlook\b|Sent from Yahoo\b|"
    r"Get Outlook for\b|Inviato da\b|Inviato dal mio\b|Scarica Outlook per\b|"
    r"Sent with Proton Mail\b|Inviato con\b)",
    re.I,
)


def strip_reply(text: str) -> str:
    """The part of a mail body the sender wrote in this message."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    kept: list[str] = []
    for index, line in enumerate(lines):
        if line.rstrip() in ("--", "-- ") or line == "-- ":
            break  # signature
        if _is_attribution(lines, index) or any(p.match(line) for p in _SEPARATORS):
            break
        if _HEADER_FROM.match(line) and _header_block_follows(lines, index):
            break  # Outlook's history without '>' prefixes
        if _FOOTERS.match(line):
            break
        if line.lstrip().startswith(">"):
            continue
        kept.append(line.rstrip())
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept)


def _is_attribution(lines: list[str], index: int) -> bool:
    line = lines[index]
    if any(p.match(line) for p in _ATTRIBUTION):
        return True
    # Gmail wraps a long attribution over two or three lines.
    if _ATTRIBUTION_START.match(line) and not _ATTRIBUTION_END.search(line):
        joined = line
        for follow in lines[index + 1 : index + 3]:
            joined += " " + follow.strip()
            if _ATTRIBUTION_END.search(follow):
                return any(p.match(joined) for p in _ATTRIBUTION)
    return False


def _header_block_follows(lines: list[str], index: int) -> bool:
    following = [ln for ln in lines[index + 1 : index + 5] if ln.strip()]
    return any(_HEADER_NEXT.match(ln) for ln in following[:3])
