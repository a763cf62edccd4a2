"""The three model-judged checks (says_what_it_does, says_how_to_start, states_price), behind one interface.

A judge reads the material an agent would read (the page's visible text, the llms.txt summary, the
descriptions in structured data and cards) and answers, per check, a verdict with a quote. A quote
must appear verbatim in the material (whitespace aside); an answer whose quote does not is not
counted, and the embedded judge's verdict stands instead.

- `ChatJudge`: any OpenAI-compatible chat-completions endpoint (BEACON_JUDGE_URL, _KEY, _MODEL),
  called through core.safe_http, one request per check, temperature 0, a strict JSON answer.
- `EmbeddedJudge`: the default. No network, no model: sentence patterns written for the three
  questions (a definition sentence; a concrete first step such as an install command, an API call
  or a sign-up URL; a price with a currency and a unit, or "free"). It is a heuristic and says so in
  each answer; it misses what is said in unusual words, and it never invents a quote.
"""

import json
import re
from dataclasses import dataclass

from django.conf import settings

from core import safe_http

from .constants import FAIL, PARTIAL, PASS
from .fetcher import user_agent

JUDGED = ("says_what_it_does", "says_how_to_start", "states_price")
MAX_MATERIAL_CHARS = 12_000

QUESTIONS = {
    "says_what_it_does": "Does the text say what the product is and the job it does, for whom, within its first sentences? "
                         "pass: a sentence names the product and what it does; partial: only vague or late; fail: nowhere.",
    "says_how_to_start": "Does the text give a concrete first step an agent can take without a person (a sign-up or key API, "
                         "an install command, an MCP URL, a quickstart with a first call)? pass: yes; partial: only a generic "
                         "'get started'/docs link; fail: only 'contact sales'/'book a demo', or nothing.",
    "states_price": "Does the text state the price: a number with a currency and a unit (per month, per call), or that it is "
                    "free? pass: yes; partial: a number without what it buys; fail: 'contact us' or nothing.",
}


@dataclass
class Answer:
    verdict: str
    quote: str
    reason: str
    judge: str
    suggestion: str = ""

    def as_dict(self) -> dict:
        return {"verdict": self.verdict, "quote": self.quote, "reason": self.reason, "judge": self.judge, "suggestion": self.suggestion}


def normalize(text: str) -> str:
    return " ".join(text.split())


def quote_found(quote: str, material: str) -> bool:
    quote = normalize(quote)
    return bool(quote) and quote in normalize(material)


def _sentences(material: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+|\n+|\s{2,}", material)
    return [normalize(p) for p in parts if len(normalize(p)) >= 3]


class EmbeddedJudge:
    """Sentence patterns for the three questions; needs no network and no model."""

    name = "embedded"

    WHAT = re.compile(r"\b(is an?|is the|are an?|helps?|lets?|enables?|allows?|provides?|turns?|gives?|checks?|builds?|"
                      r"makes?|automates?|monitors?|tracks?|finds?|answers?|sends?|stores?|manages?)\b", re.I)
    START_CONCRETE = re.compile(
        r"(pip install|npm (install|i)|npx |brew install|cargo add|go get|docker run|curl |POST /|GET /|"
        r"\bsign ?up\b.*\b(api|key|free)\b|\bapi key\b|\bget a key\b|/signup\b|/mcp\b|\bmcp server\b|"
        r"\bquickstart\b.*\b(call|request|key)\b|\bregister\b.*\b(api|key)\b)", re.I)
    START_VAGUE = re.compile(r"\b(get started|getting started|start now|try it|documentation|docs|quickstart|sign ?up)\b", re.I)
    START_PERSON = re.compile(r"\b(contact (sales|us)|book a (demo|call)|request a demo|talk to (sales|us))\b", re.I)
    PRICE = re.compile(
        r"((\$|€|£|USD|EUR|GBP)\s?\d[\d,.]*|\d[\d,.]*\s?(\$|€|£|USD|EUR|GBP|dollars?|euros?))", re.I)
    UNIT = re.compile(r"(/\s?(mo|month|year|yr|call|request|check|user|seat)|\bper\b|\ba (month|year|call|check|request)\b|"
                      r"\bmonthly\b|\byearly\b|\bone-time\b|\beach\b|\bfor \d)", re.I)
    FREE = re.compile(r"\b(free (plan|tier|of charge|forever)|is free|it's free|free to use|no cost)\b", re.I)
    PRICE_PERSON = re.compile(r"\b(contact (us|sales) for (pricing|a quote)|pricing on request|custom pricing)\b", re.I)

    def judge(self, material: str, *, product: str = "") -> dict[str, Answer]:
        sentences = _sentences(material)
        return {
            "says_what_it_does": self._what(sentences, product),
            "says_how_to_start": self._start(sentences),
            "states_price": self._price(sentences),
        }

    def _what(self, sentences: list[str], product: str) -> Answer:
        early = sentences[:12]
        for sentence in sentences[:60]:
            words = len(sentence.split())
            if 5 <= words <= 60 and self.WHAT.search(sentence):
                named = bool(product) and product.lower() in sentence.lower()
                if sentence in early or named:
                    return Answer(PASS, sentence, "An early sentence says what the product does (pattern match).", self.name)
                return Answer(PARTIAL, sentence, "What the product does is only said further down the page.", self.name,
                              "Say what the product does, for whom, in the first sentence of the page.")
        return Answer(FAIL, "", "No sentence says what the product does.", self.name,
                      "Open the page with one sentence: what the product is, what it does and for whom.")

    def _start(self, sentences: list[str]) -> Answer:
        vague = person = None
        for sentence in sentences:
            if len(sentence) > 400:
                continue
            if self.START_CONCRETE.search(sentence):
                return Answer(PASS, sentence, "A concrete first step an agent can take without a person.", self.name)
            if vague is None and self.START_VAGUE.search(sentence):
                vague = sentence
            if person is None and self.START_PERSON.search(sentence):
                person = sentence
        suggestion = "Give the first step an agent can take alone: the sign-up or key API, an install command or the MCP URL."
        if vague is not None:
            return Answer(PARTIAL, vague, "Only a generic way in, no concrete first call.", self.name, suggestion)
        if person is not None:
            return Answer(FAIL, person, "Starting needs a person (sales, demo).", self.name, suggestion)
        return Answer(FAIL, "", "Nothing says how to start.", self.name, suggestion)

    def _price(self, sentences: list[str]) -> Answer:
        bare = person = None
        for sentence in sentences:
            if len(sentence) > 400:
                continue
            if self.PRICE.search(sentence):
                if self.UNIT.search(sentence):
                    return Answer(PASS, sentence, "A price with a currency and what it buys.", self.name)
                bare = bare or sentence
            elif self.FREE.search(sentence):
                return Answer(PASS, sentence, "The product is stated to be free.", self.name)
            if person is None and self.PRICE_PERSON.search(sentence):
                person = sentence
        suggestion = "State the price: amount, currency and unit (per month, per call), or that it is free."
        if bare is not None:
            return Answer(PARTIAL, bare, "A price without what it buys.", self.name, suggestion)
        if person is not None:
            return Answer(FAIL, person, "The price is only given on request.", self.name, suggestion)
        return Answer(FAIL, "", "No price is stated.", self.name, suggestion)


class JudgeUnavailable(Exception):
    pass


class ChatJudge:
    """An OpenAI-compatible chat-completions endpoint; answers that do not quote the material fall back to the embedded judge."""

    name = "chat"

    def __init__(self, *, url: str, key: str = "", model: str = "", timeout: float = 30.0):
        self.url = url.rstrip("/")
        if not self.url.endswith("/chat/completions"):
            self.url += "/chat/completions"
        self.key, self.model, self.timeout = key, model, timeout
        self.requests = 0

    def _ask(self, check: str, material: str) -> dict:
        system = ("You judge whether a web page lets an AI agent understand and use a product. Answer only with a JSON object "
                  '{"verdict": "pass"|"partial"|"fail", "quote": "<an exact sentence copied from the text, or empty>", '
                  '"reason": "<one sentence>", "suggestion": "<one concrete change, or empty>"}. The quote must be copied '
                  "verbatim from the text.")
        body = {"model": self.model, "temperature": 0, "response_format": {"type": "json_object"},
                "messages": [{"role": "system", "content": system},
                             {"role": "user", "content": f"Question: {QUESTIONS[check]}\n\nText:\n<<<\n{material}\n>>>"}]}
        headers = {"Content-Type": "application/json"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        self.requests += 1
        try:
            response = safe_http.fetch(self.url, method="POST", json=body, headers=headers, timeout=self.timeout,
                                       deadline=self.timeout, max_bytes=200_000, allow_redirects=False, user_agent=user_agent())
        except safe_http.SafeHttpError as exc:
            raise JudgeUnavailable(exc.message) from None
        if not response.ok:
            raise JudgeUnavailable(f"The judge answered HTTP {response.status}.")
        try:
            content = response.json()["choices"][0]["message"]["content"]
            answer = json.loads(content)
        except (ValueError, KeyError, IndexError, TypeError):
            raise JudgeUnavailable("The judge's answer is not the chat-completions JSON it should be.") from None
        if not isinstance(answer, dict) or answer.get("verdict") not in (PASS, PARTIAL, FAIL):
            raise JudgeUnavailable("The judge's answer has no valid verdict.")
        return answer

    def judge(self, material: str, *, product: str = "") -> dict[str, Answer]:
        fallback = EmbeddedJudge().judge(material, product=product)
        answers = {}
        for check in JUDGED:
            try:
                got = self._ask(check, material)
            except JudgeUnavailable as exc:
                answer = fallback[check]
                answer.reason += f" (The model judge was not used: {exc})"
                answers[check] = answer
                continue
            quote = str(got.get("quote") or "")
            if got["verdict"] != FAIL and not quote_found(quote, material):
                answer = fallback[check]
                answer.reason += " (The model's answer did not count: its quote is not in the page.)"
                answers[check] = answer
                continue
            answers[check] = Answer(got["verdict"], normalize(quote), str(got.get("reason") or "")[:500], f"chat:{self.model}",
                                    str(got.get("suggestion") or "")[:500])
        return answers


def default_judge():
    if settings.BEACON_JUDGE_URL:
        return ChatJudge(url=settings.BEACON_JUDGE_URL, key=settings.BEACON_JUDGE_KEY, model=settings.BEACON_JUDGE_MODEL,
                         timeout=float(settings.BEACON_JUDGE_SECONDS))
    return EmbeddedJudge()
