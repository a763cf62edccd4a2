"""Which agent a User-Agent string claims to be: whole product tokens, most specific first.

A token matches only where it stands as a whole in the string: the character before it and the
one after it (if any) are not letters or digits, compared case-insensitively. So `LCC` never
matches inside `SLCC2`, `Spider` never inside `Baiduspider`, and `Googlebot` matches in
`Googlebot/2.1` and `Googlebot-Image/1.0`; when both `Googlebot` and `Googlebot-Image` are
tokens, the longer (more specific) one wins. A token ending in "/" (`Operator/`) matches only as a
product with a version. Tokens are indexed by their first run of letters and
digits, so a lookup costs one dictionary probe per run of the string, not one regex per agent.
"""

import re
from dataclasses import dataclass

_RUN = re.compile(r"[A-Za-z0-9]+")

AGENT, GENERIC, CONTROL = "agent", "generic", "control"


@dataclass(frozen=True)
class Match:
    token: str  # as registered
    kind: str  # AGENT, GENERIC or CONTROL
    key: str  # registry slug, or the generic client's name
    start: int


class Matcher:
    """An index of tokens; `match()` answers the best claim of each kind in one pass."""

    def __init__(self, tokens: list[tuple[str, str, str]]):
        """`tokens`: (token, kind, key) triples."""
        self.index: dict[str, list[tuple[str, int, str, str, str]]] = {}
        self.size = 0
        for token, kind, key in tokens:
            token = token.strip()
            first = _RUN.search(token)
            if not token or first is None:
                continue
            lowered = token.lower()
            entry = (lowered, first.start(), token, kind, key)
            bucket = self.index.setdefault(first.group(0).lower(), [])
            if entry not in bucket:
                bucket.append(entry)
                self.size += 1
        for bucket in self.index.values():
            bucket.sort(key=lambda item: -len(item[0]))  # longest first

    def matches(self, user_agent: str) -> list[Match]:
        lowered = user_agent.lower()
        found: list[Match] = []
        length = len(lowered)
        index = self.index
        for run in _RUN.finditer(lowered):
            bucket = index.get(run.group(0))
            if bucket is None:
                continue
            for token_lower, offset, token, kind, key in bucket:
                start = run.start() - offset
                if start < 0 or not lowered.startswith(token_lower, start):
                    continue
                if start > 0 and lowered[start - 1].isalnum():
                    continue
                end = start + len(token_lower)
                if end < length and lowered[end].isalnum() and not token_lower.endswith("/"):
                    continue
                found.append(Match(token, kind, key, start))
        return found

    def best(self, user_agent: str) -> dict[str, Match]:
        """The most specific match of each kind: longest token, then the first in the string."""
        chosen: dict[str, Match] = {}
        for match in self.matches(user_agent):
            current = chosen.get(match.kind)
            if current is None or (len(match.token), -match.start) > (len(current.token), -current.start):
                chosen[match.kind] = match
        return chosen
