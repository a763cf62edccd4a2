"""Normalise and de-obfuscate before the classifiers look: NFKC, invisible characters, Unicode tag
characters decoded, base64 and hex blobs decoded, HTML and code comments pulled out. The spans of
findings always index the caller's original text; these views only feed the classifiers."""

import base64
import binascii
import re
import unicodedata

INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u00ad\u180e]")
TAGS = re.compile("[\U000e0000-\U000e007f]+")
B64 = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{24,}={0,2}(?![A-Za-z0-9+/=])")
HEX = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}[ :]?){12,}(?![0-9A-Fa-f])")
COMMENTS = re.compile(r"<!--([\s\S]*?)-->|/\*([\s\S]*?)\*/|(?:^|\s)(?://|#)\s?(.+)$", re.MULTILINE)
MAX_DECODED = 4


def _printable(raw: bytes) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    letters = sum(ch.isalpha() or ch.isspace() for ch in text)
    return text if text and letters / len(text) > 0.7 else None


def views(text: str) -> tuple[str, list[str], list[str]]:
    """(normalised text, extra texts decoded from hidden parts, signals such as 'invisible', 'base64')."""
    signals: list[str] = []
    extra: list[str] = []
    tags = TAGS.findall(text)
    if tags:
        signals.append("unicode_tags")
        extra.append("".join(chr(ord(ch) - 0xE0000) for run in tags for ch in run if 0x20 <= ord(ch) - 0xE0000 < 0x7F))
        text = TAGS.sub("", text)
    if INVISIBLE.search(text):
        signals.append("invisible")
        text = INVISIBLE.sub("", text)
    norm = unicodedata.normalize("NFKC", text)
    for m in B64.finditer(norm):
        if len(extra) >= MAX_DECODED:
            break
        blob = m.group()
        try:
            decoded = _printable(base64.b64decode(blob + "=" * (-len(blob) % 4), validate=False))
        except (binascii.Error, ValueError):
            decoded = None
        if decoded:
            signals.append("base64")
            extra.append(decoded)
    for m in HEX.finditer(norm):
        if len(extra) >= MAX_DECODED:
            break
        try:
            decoded = _printable(bytes.fromhex(re.sub(r"[ :]", "", m.group())))
        except ValueError:
            decoded = None
        if decoded:
            signals.append("hex")
            extra.append(decoded)
    if "<!--" in norm or "/*" in norm:
        for m in COMMENTS.finditer(norm):
            body = next((g for g in m.groups() if g), "")
            if body.strip() and len(extra) < MAX_DECODED * 2:
                signals.append("comment")
                extra.append(body.strip())
    return norm, extra, signals
