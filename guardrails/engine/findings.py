"""What every detector returns: findings with a character span into the caller's text and a score."""

from dataclasses import dataclass, field


@dataclass
class Finding:
    """One thing a detector found. `start`/`end` index the input as sent (Python characters)."""

    detector: str          # pii, secrets, prompt_injection, toxicity, regex, words, topics, length, language, links
    type: str              # EMAIL_ADDRESS, GITHUB_TOKEN, INJECTION, ...
    start: int
    end: int
    score: float           # the detector's calibrated probability that this finding is real
    value: str = ""        # the matched text (never returned raw for secrets)
    meta: dict = field(default_factory=dict)

    def masked(self) -> str:
        """The value with most of it hidden: enough to recognise, never enough to use."""
        value = self.value
        if self.detector == "secrets":
            return value[:4] + "…" if len(value) > 8 else "…"
        if len(value) <= 4:
            return "*" * len(value)
        keep = 2 if len(value) < 10 else 4
        return value[:keep] + "*" * (len(value) - keep * 2) + value[-keep:]

    def public(self) -> dict:
        return {
            "detector": self.detector,
            "type": self.type,
            "start": self.start,
            "end": self.end,
            "score": round(self.score, 4),
            "text": self.masked() if self.detector in ("pii", "secrets") else self.value[:200],
        }


def overlaps(a: Finding, b: Finding) -> bool:
    return a.start < b.end and b.start < a.end
