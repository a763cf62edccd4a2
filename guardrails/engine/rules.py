"""The rule engine: a rule is a detector, its parameters, and what a failure means.

    {"id": "pii", "detector": "pii", "action": "redact", "params": {"types": ["EMAIL_ADDRESS"]}}

Each rule gives `pass`, `fail` (score at or above its threshold) or `review` (in the band below the
threshold, or a failing rule whose action is `review`). The aggregate verdict is the worst rule
verdict; `recommended_action` follows block > redact > review > allow. Pure Python: no Django here.
"""

import re
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import numpy as np
import phonenumbers

from guardrails.engine import calibration, encoder, language, lexicon, normalize, pii, secrets, textmodel
from guardrails.engine.findings import Finding

DETECTORS = ("prompt_injection", "toxicity", "pii", "secrets", "regex", "words", "topics", "length", "language", "links")
ACTIONS = ("block", "redact", "review")
PRECEDENCE = {"block": 3, "redact": 2, "review": 1, "allow": 0}
PII_TYPES = tuple(pii.DEFAULT_SCORES)
CHANNELS = ("email", "sms", "chat", "whatsapp", "slack", "voice", "social", "other")
ENGINE_VERSION = "guardrails-2026.11"

# How far below a model threshold a score is held for review, as a fraction of the threshold.
REVIEW_BAND = 0.9
# An explicit insult or threat from the lexicon puts the toxicity score this far above its threshold...
LEXICON_MARGIN = 0.1
# ...a threat phrase always, an insult only when the model's own score is at least this share of the
# threshold: a word alone does not make a text toxic (a note on where "idiot" comes from, a review of a
# "stupid" film, an old friend called "bastard"). Out of fold (the heads of session 7), unconditional
# insults took look-alike false positives to 4.2 % (the goal is 3 %); at half the threshold they stay at
# 2.9 % and recall goes 0.894 -> 0.903 (0.911 unconditional).
LEXICON_AGREEMENT = 0.5
URL = re.compile(r"\b(?:https?://|www\.)[^\s<>\"'`]+", re.IGNORECASE)
CHANNEL_NORMS = {
    "sms": {"max_chars": 1600, "links": "review"},
    "voice": {"max_chars": 3000, "links": "review"},
    "whatsapp": {"max_chars": 4096},
    "social": {"max_chars": 5000},
}


class RuleError(ValueError):
    """A rule set definition that cannot be used; the message names the field."""


@dataclass
class RuleResult:
    id: str
    detector: str
    action: str
    verdict: str
    score: float
    findings: list[Finding] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    def public(self) -> dict:
        return {
            "id": self.id,
            "detector": self.detector,
            "verdict": self.verdict,
            "action": self.action if self.verdict != "pass" else "allow",
            "score": round(self.score, 4),
            "findings": [f.public() for f in self.findings],
            "reasons": self.reasons,
        }


@dataclass
class Outcome:
    verdict: str
    recommended_action: str
    confidence: float
    language: str
    rules: list[RuleResult]
    redacted_text: str | None
    signals: list[str]
    latency_ms: float

    def findings(self) -> list[Finding]:
        return [f for r in self.rules for f in r.findings]


# ---------------------------------------------------------------- validation of a rule list


def _check_str_list(value, name: str, *, max_items: int = 500, max_len: int = 200) -> list[str]:
    if not isinstance(value, list) or not value or len(value) > max_items:
        raise RuleError(f"{name} must be a list of 1 to {max_items} strings.")
    for item in value:
        if not isinstance(item, str) or not item.strip() or len(item) > max_len:
            raise RuleError(f"{name} must hold non-empty strings of at most {max_len} characters.")
    return [item.strip() for item in value]


def rules_validate(rules) -> list[dict]:
    """The rule list in its canonical form, or RuleError naming the bad field (`rules[2].params.pattern`)."""
    if not isinstance(rules, list) or not rules:
        raise RuleError("rules must be a non-empty list of rules.")
    if len(rules) > 50:
        raise RuleError("rules may hold at most 50 rules.")
    out, seen = [], set()
    for i, rule in enumerate(rules):
        at = f"rules[{i}]"
        if not isinstance(rule, dict):
            raise RuleError(f"{at} must be an object with detector and action.")
        unknown = set(rule) - {"id", "detector", "action", "params", "threshold"}
        if unknown:
            raise RuleError(f"{at}.{sorted(unknown)[0]} is not a rule field (id, detector, action, params, threshold).")
        detector = rule.get("detector")
        if detector not in DETECTORS:
            raise RuleError(f"{at}.detector must be one of {', '.join(DETECTORS)}.")
        action = rule.get("action", "block")
        if action not in ACTIONS:
            raise RuleError(f"{at}.action must be one of block, redact, review.")
        rule_id = rule.get("id", detector)
        if not isinstance(rule_id, str) or not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,49}", rule_id):
            raise RuleError(f"{at}.id must be 1 to 50 lower-case letters, digits, '-' or '_'.")
        if rule_id in seen:
            raise RuleError(f"{at}.id '{rule_id}' is used twice; give each rule its own id.")
        seen.add(rule_id)
        threshold = rule.get("threshold")
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold < 1):
            raise RuleError(f"{at}.threshold must be a number between 0 and 1.")
        params = rule.get("params", {}) or {}
        if not isinstance(params, dict):
            raise RuleError(f"{at}.params must be an object.")
        params = _params_validate(detector, params, f"{at}.params")
        if action == "redact" and detector in ("prompt_injection", "toxicity", "length", "language", "topics"):
            raise RuleError(f"{at}.action cannot be redact for {detector}: there is no span to remove; use block or review.")
        entry = {"id": rule_id, "detector": detector, "action": action, "params": params}
        if threshold is not None:
            entry["threshold"] = float(threshold)
        out.append(entry)
    return out


def _params_validate(detector: str, params: dict, at: str) -> dict:
    allowed = {
        "prompt_injection": set(), "toxicity": set(), "secrets": set(),
        "pii": {"types"}, "regex": {"pattern", "ignore_case"}, "words": {"words", "whole_words"},
        "topics": {"topics"}, "length": {"min_chars", "max_chars"}, "language": {"allowed"},
        "links": {"allowed_domains"},
    }[detector]
    unknown = set(params) - allowed
    if unknown:
        raise RuleError(f"{at}.{sorted(unknown)[0]} is not a parameter of {detector}.")
    out: dict = {}
    if detector == "pii" and "types" in params:
        types = _check_str_list(params["types"], f"{at}.types", max_items=len(PII_TYPES))
        bad = [t for t in types if t not in PII_TYPES]
        if bad:
            raise RuleError(f"{at}.types: '{bad[0]}' is not one of {', '.join(PII_TYPES)}.")
        out["types"] = types
    if detector == "regex":
        pattern = params.get("pattern")
        if not isinstance(pattern, str) or not pattern or len(pattern) > 500:
            raise RuleError(f"{at}.pattern must be a regular expression of 1 to 500 characters.")
        if re.search(r"\([^)]*[+*][^)]*\)[+*{]", pattern):
            raise RuleError(f"{at}.pattern nests repetition (such as (a+)+), which can take exponential time.")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise RuleError(f"{at}.pattern is not a valid regular expression: {exc}.") from None
        out["pattern"] = pattern
        out["ignore_case"] = bool(params.get("ignore_case", False))
    if detector == "words":
        out["words"] = _check_str_list(params.get("words"), f"{at}.words", max_items=1000, max_len=100)
        out["whole_words"] = bool(params.get("whole_words", True))
    if detector == "topics":
        topics = params.get("topics")
        if not isinstance(topics, list) or not topics or len(topics) > 50:
            raise RuleError(f"{at}.topics must be a list of 1 to 50 topics, each {{name, keywords}}.")
        cleaned = []
        for j, topic in enumerate(topics):
            if not isinstance(topic, dict) or not isinstance(topic.get("name"), str) or not topic["name"].strip():
                raise RuleError(f"{at}.topics[{j}].name must be a non-empty string.")
            cleaned.append({"name": topic["name"].strip()[:100], "keywords": _check_str_list(topic.get("keywords"), f"{at}.topics[{j}].keywords", max_items=200, max_len=100)})
        out["topics"] = cleaned
    if detector == "length":
        for key in ("min_chars", "max_chars"):
            if key in params:
                value = params[key]
                if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 1_000_000:
                    raise RuleError(f"{at}.{key} must be a whole number from 0 to 1000000.")
                out[key] = value
        if not out:
            raise RuleError(f"{at} needs min_chars or max_chars.")
        if "min_chars" in out and "max_chars" in out and out["min_chars"] > out["max_chars"]:
            raise RuleError(f"{at}.min_chars must not exceed max_chars.")
    if detector == "language":
        codes = _check_str_list(params.get("allowed"), f"{at}.allowed", max_items=200, max_len=3)
        out["allowed"] = [c.lower() for c in codes]
    if detector == "links":
        domains = params.get("allowed_domains", [])
        out["allowed_domains"] = [d.lower().lstrip(".") for d in _check_str_list(domains, f"{at}.allowed_domains", max_len=253)] if domains else []
    return out


# ---------------------------------------------------------------- system rule sets

SYSTEM_RULE_SETS: dict[str, dict] = {
    "default": {
        "name": "Default",
        "description": "Prompt injection and toxicity block; secrets and personal data are redacted.",
        "rules": [
            {"id": "prompt_injection", "detector": "prompt_injection", "action": "block", "params": {}},
            {"id": "toxicity", "detector": "toxicity", "action": "block", "params": {}},
            {"id": "secrets", "detector": "secrets", "action": "redact", "params": {}},
            {"id": "pii", "detector": "pii", "action": "redact", "params": {}},
        ],
    },
    "prompt-injection": {
        "name": "Prompt injection",
        "description": "Blocks attempts to take over an AI system, in any language and after de-obfuscation.",
        "rules": [{"id": "prompt_injection", "detector": "prompt_injection", "action": "block", "params": {}}],
    },
    "pii": {
        "name": "Personal data",
        "description": "Redacts e-mail addresses, phones, cards, IBANs, national ids, IP and crypto addresses.",
        "rules": [{"id": "pii", "detector": "pii", "action": "redact", "params": {}}],
    },
    "secrets": {
        "name": "Secrets",
        "description": "Blocks API keys, tokens, private keys, passwords and URLs with credentials.",
        "rules": [{"id": "secrets", "detector": "secrets", "action": "block", "params": {}}],
    },
    "content-safety": {
        "name": "Content safety",
        "description": "Blocks insults, threats, slurs and harassment, in any language.",
        "rules": [{"id": "toxicity", "detector": "toxicity", "action": "block", "params": {}}],
    },
    "outbound-message": {
        "name": "Outbound message",
        "description": (
            "For a message an agent sends to a person. Takes context {recipient, channel, owns_contact_info}: "
            "the recipient's own contact and identity data passes (all of it when owns_contact_info is true, "
            "except full card numbers); anyone else's is redacted; credentials and attacks on the recipient's "
            "agent are blocked; abuse is blocked; the channel's norms apply (length, links on sms and voice)."
        ),
        "rules": [
            {"id": "prompt_injection", "detector": "prompt_injection", "action": "block", "params": {}},
            {"id": "toxicity", "detector": "toxicity", "action": "block", "params": {}},
            {"id": "secrets", "detector": "secrets", "action": "block", "params": {}},
            {"id": "third_party_pii", "detector": "pii", "action": "redact", "params": {}},
        ],
        "outbound": True,
    },
}
DEFAULT_RULE_SET = "default"


# ---------------------------------------------------------------- running rules


def _recipient_keys(context: dict, lang: str) -> set[str]:
    """The recipient's e-mail (lower case) and phone (E.164), when the context names one."""
    recipient = str(context.get("recipient") or "").strip()
    keys: set[str] = set()
    if not recipient:
        return keys
    for m in pii.EMAIL.finditer(recipient):
        keys.add(m.group().lower())
    regions = pii.LANG_REGIONS.get(lang, []) + ["US"]
    for region in regions:
        try:
            number = phonenumbers.parse(recipient, region)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_possible_number(number):
            keys.add(phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164))
            break
    if not keys:
        keys.add(recipient.lower())
    return keys


class _Scan:
    """What one evaluation computes once and every rule reuses."""

    def __init__(self, text: str, context: dict):
        self.text = text
        self.context = context
        self.norm, self.extra, self.signals = normalize.views(text)
        self.language = language.detect(self.norm)
        self.insults: list[str] = []
        self.overrides: list[str] = []
        self._cache: dict = {}

    def once(self, key: str, fn):
        if key not in self._cache:
            self._cache[key] = fn()
        return self._cache[key]

    def _features(self, head_name: str) -> list:
        """The n-gram features of what `head_name` scores; the windows' features are computed once for all heads."""
        texts = [self.norm, *self.extra]
        shared = self.once("features", lambda: textmodel.window_features(textmodel.window_texts(texts)))
        if head_name not in textmodel.SEGMENTED_HEADS:
            return shared
        return shared + self.once("segments", lambda: textmodel.window_features(
            [s for t in texts if t for s in textmodel.segments(t)]))

    def _embedding(self) -> np.ndarray:
        """The encoder's embedding of the text's most suspicious window: one call serves every head."""
        return self.once("embedding", lambda: encoder.embed([textmodel.encoder_window([self.norm, *self.extra], textmodel.heads())])[0])

    def head_score(self, name: str) -> float:
        def run():
            head = textmodel.head(name)
            if head is None:
                return 0.0
            score = head.probability(head.top_raw(self._features(name)), head.emb_raw(self._embedding()))
            if name == "prompt_injection":
                hits = [h for t in (self.norm, *self.extra) for h in lexicon.overrides(t)]
                if hits:
                    self.overrides = hits
                    score = max(score, min(0.99, head.threshold_in(self.language) + LEXICON_MARGIN))
            if name == "toxicity":
                hits = lexicon.threats(self.norm)
                if score >= LEXICON_AGREEMENT * head.threshold_in(self.language):
                    hits += lexicon.insults(self.norm)
                if hits:
                    self.insults = hits
                    score = max(score, min(0.99, head.threshold_in(self.language) + LEXICON_MARGIN))
            return score

        return self.once(f"head:{name}", run)

    def pii(self) -> list[Finding]:
        recipient = str(self.context.get("recipient") or "")
        regions: list[str] = []
        if recipient:
            try:
                regions.append(phonenumbers.region_code_for_number(phonenumbers.parse(recipient, None)) or "")
            except phonenumbers.NumberParseException:
                pass
        return self.once("pii", lambda: pii.detect(self.text, language=self.language, phone_regions=[r for r in regions if r]))

    def secrets(self) -> list[Finding]:
        return self.once("secrets", lambda: secrets.detect(self.text))


def _threshold(rule: dict, head_name: str, language: str) -> float:
    """The rule's own threshold, else the head's for the detected language."""
    if "threshold" in rule:
        return rule["threshold"]
    head = textmodel.head(head_name)
    return head.threshold_in(language) if head else 0.5


def _run_rule(rule: dict, scan: _Scan, *, outbound: bool) -> RuleResult:
    detector, action, params = rule["detector"], rule["action"], rule["params"]
    result = RuleResult(rule["id"], detector, action, "pass", 0.0)
    text = scan.text
    if detector in ("prompt_injection", "toxicity"):
        score = scan.head_score(detector)
        threshold = _threshold(rule, detector, scan.language)
        result.score = score
        if score >= threshold:
            result.verdict = "fail"
            label = "a prompt injection or jailbreak" if detector == "prompt_injection" else "toxic (insult, threat or harassment)"
            result.reasons.append(f"The text reads as {label} (probability {score:.2f}, threshold {threshold:.2f}).")
            if detector == "toxicity" and scan.insults:
                result.reasons.append(f"It contains {len(scan.insults)} explicit insult(s) or threat(s) from the per-language lists.")
            if detector == "prompt_injection" and scan.overrides:
                result.reasons.append("It tells the model to drop its previous instructions.")
            if detector == "prompt_injection" and scan.signals:
                result.reasons.append(f"Hidden content was decoded before scoring: {', '.join(sorted(set(scan.signals)))}.")
        elif score >= threshold * REVIEW_BAND:
            result.verdict = "review"
            result.reasons.append(f"The {detector.replace('_', ' ')} score {score:.2f} is close to the threshold {threshold:.2f}.")
    elif detector == "pii":
        wanted = set(params.get("types") or PII_TYPES)
        findings = [f for f in scan.pii() if f.type in wanted]
        if outbound:
            keys = _recipient_keys(scan.context, scan.language)
            owns = bool(scan.context.get("owns_contact_info"))
            kept = []
            for f in findings:
                normalized = f.meta.get("normalized", f.value.lower())
                if normalized in keys or (owns and f.type != "CREDIT_CARD"):
                    result.reasons.append(f"A {f.type} belongs to the recipient and may be sent.")
                    continue
                kept.append(f)
            findings = kept
            third_party_contacts = [f for f in findings if f.type in ("EMAIL_ADDRESS", "PHONE_NUMBER")]
            if len(third_party_contacts) >= 5:
                action = "review"
                result.reasons.append("The message holds a list of other people's contact details; a person should check it.")
        result.findings = findings
        if findings:
            result.verdict = "fail"
            result.score = max(f.score for f in findings)
            types = sorted({f.type for f in findings})
            result.reasons.append(f"Personal data found: {', '.join(types)}.")
    elif detector == "secrets":
        findings = scan.secrets()
        result.findings = findings
        if findings:
            result.verdict = "fail"
            result.score = max(f.score for f in findings)
            result.reasons.append(f"Credentials found: {', '.join(sorted({f.type for f in findings}))}.")
    elif detector == "regex":
        flags = re.IGNORECASE if params.get("ignore_case") else 0
        pattern = re.compile(params["pattern"], flags)
        for m in pattern.finditer(text[:100_000]):
            if m.end() > m.start():
                result.findings.append(Finding("regex", "PATTERN", m.start(), m.end(), 1.0, m.group()))
            if len(result.findings) >= 100:
                break
        if result.findings:
            result.verdict, result.score = "fail", 1.0
            result.reasons.append("The text matches the rule's pattern.")
    elif detector == "words":
        words = params["words"]
        body = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
        pattern = re.compile(rf"(?<!\w)(?:{body})(?!\w)" if params.get("whole_words", True) else body, re.IGNORECASE)
        for m in pattern.finditer(scan.norm if len(scan.norm) == len(text) else text):
            result.findings.append(Finding("words", "WORD", m.start(), m.end(), 1.0, m.group()))
        if result.findings:
            result.verdict, result.score = "fail", 1.0
            result.reasons.append(f"Listed words found: {', '.join(sorted({f.value.lower() for f in result.findings})[:10])}.")
    elif detector == "topics":
        lowered = scan.norm.lower()
        for topic in params["topics"]:
            hits = [k for k in topic["keywords"] if re.search(rf"(?<!\w){re.escape(k.lower())}(?!\w)", lowered)]
            if hits:
                result.reasons.append(f"The text is about the topic '{topic['name']}' ({', '.join(hits[:5])}).")
        if result.reasons:
            result.verdict, result.score = "fail", 1.0
    elif detector == "length":
        n = len(text)
        if "max_chars" in params and n > params["max_chars"]:
            result.verdict, result.score = "fail", 1.0
            result.reasons.append(f"The text has {n} characters; the rule allows at most {params['max_chars']}.")
        if "min_chars" in params and n < params["min_chars"]:
            result.verdict, result.score = "fail", 1.0
            result.reasons.append(f"The text has {n} characters; the rule needs at least {params['min_chars']}.")
    elif detector == "language":
        if scan.language and scan.language not in params["allowed"]:
            result.verdict, result.score = "fail", 1.0
            result.reasons.append(f"The text is in '{scan.language}', which is not among the allowed languages.")
    elif detector == "links":
        allowed = params.get("allowed_domains", [])
        for m in URL.finditer(text):
            url = m.group().rstrip(".,;:!?)]}")
            host = (urlsplit(url if "://" in url else "http://" + url).hostname or "").lower()
            if not any(host == d or host.endswith("." + d) for d in allowed):
                result.findings.append(Finding("links", "LINK", m.start(), m.start() + len(url), 1.0, url, {"host": host}))
        if result.findings:
            result.verdict, result.score = "fail", 1.0
            hosts = sorted({f.meta["host"] for f in result.findings})
            result.reasons.append(f"Links to domains not on the allow-list: {', '.join(hosts[:10])}.")
    if result.verdict == "fail" and action == "review":
        result.verdict = "review"
    result.action = action
    return result


def _channel_rules(context: dict) -> list[dict]:
    norms = CHANNEL_NORMS.get(str(context.get("channel") or "").lower(), {})
    rules = []
    if "max_chars" in norms:
        rules.append({"id": "channel_length", "detector": "length", "action": "review", "params": {"max_chars": norms["max_chars"]}})
    if norms.get("links") == "review":
        rules.append({"id": "channel_links", "detector": "links", "action": "review", "params": {"allowed_domains": []}})
    return rules


def redact(text: str, findings: list[Finding]) -> str:
    out, last = [], 0
    for f in sorted(findings, key=lambda f: f.start):
        if f.start < last:
            continue
        out.append(text[last:f.start])
        out.append(f"[{f.type}]")
        last = f.end
    out.append(text[last:])
    return "".join(out)


def evaluate(text: str, rules: list[dict], *, context: dict | None = None, outbound: bool = False) -> Outcome:
    """Run `rules` over `text`: per-rule results, the aggregate verdict and action, and the confidence."""
    started = time.perf_counter()
    context = context or {}
    scan = _Scan(text, context)
    all_rules = list(rules) + (_channel_rules(context) if outbound else [])
    results = [_run_rule(rule, scan, outbound=outbound) for rule in all_rules]
    action = "allow"
    for r in results:
        candidate = r.action if r.verdict == "fail" else "review" if r.verdict == "review" else "allow"
        if PRECEDENCE[candidate] > PRECEDENCE[action]:
            action = candidate
    verdict = "fail" if action in ("block", "redact") else "review" if action == "review" else "pass"
    redacted = None
    if action == "redact":
        spans = [f for r in results if r.verdict == "fail" and r.action == "redact" for f in r.findings]
        redacted = redact(text, spans)
    confidence = calibration.confidence(action, results)
    return Outcome(verdict, action, confidence, scan.language, results, redacted, sorted(set(scan.signals)),
                   round((time.perf_counter() - started) * 1000, 2))
