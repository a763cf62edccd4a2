"""Credentials: provider key formats (after gitleaks' rules, MIT), private keys, passwords in
assignments or sentences in 14 languages, URLs with credentials. Placeholders, documented example
keys and environment-variable references are not secrets.
"""

import math
import re
from collections import Counter

from guardrails.engine.findings import Finding

# (kind, keywords, pattern, score): as in gitleaks, a rule's pattern runs only on a text that holds one of
# its keywords (lowercase), so the 24 patterns cost a substring search each on most texts.
RULES: list[tuple[str, tuple[str, ...], re.Pattern, float]] = [
    ("PRIVATE_KEY", ("private key",), re.compile(r"-----BEGIN (?:[A-Z0-9]+ )?PRIVATE KEY(?: BLOCK)?-----[\s\S]{0,6000}?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)"), 0.99),
    ("AWS_ACCESS_KEY", ("akia", "asia", "abia", "acca"), re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Z0-9])"), 0.98),
    ("GITHUB_TOKEN", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), re.compile(r"(?<![A-Za-z0-9_])(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}(?![A-Za-z0-9])"), 0.99),
    ("GITHUB_TOKEN", ("github_pat_",), re.compile(r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{60,90}"), 0.99),
    ("GITLAB_TOKEN", ("glpat-",), re.compile(r"(?<![A-Za-z0-9_])glpat-[A-Za-z0-9_-]{20,}"), 0.99),
    ("SLACK_WEBHOOK", ("hooks.slack.com",), re.compile(r"https?://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9+/_-]{20,}"), 0.99),
    ("SLACK_TOKEN", ("xox",), re.compile(r"(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}"), 0.97),
    ("STRIPE_KEY", ("_live_", "_test_"), re.compile(r"(?<![A-Za-z0-9])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"), 0.98),
    ("ANTHROPIC_KEY", ("sk-ant-",), re.compile(r"(?<![A-Za-z0-9])sk-ant-(?:api|admin)\d\d-[A-Za-z0-9_-]{40,}"), 0.99),
    ("OPENAI_KEY", ("t3blbkfj",), re.compile(r"(?<![A-Za-z0-9])sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}"), 0.99),
    ("OPENAI_KEY", ("sk-",), re.compile(r"(?<![A-Za-z0-9])sk-(?:proj-)?[A-Za-z0-9]{32,}(?![A-Za-z0-9])"), 0.9),
    ("GOOGLE_API_KEY", ("aiza",), re.compile(r"(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])"), 0.98),
    ("HUGGINGFACE_TOKEN", ("hf_",), re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z]{30,40}(?![A-Za-z0-9])"), 0.98),
    ("SENDGRID_KEY", ("sg.",), re.compile(r"(?<![A-Za-z0-9])SG\.[A-Za-z0-9_-]{20,24}\.[A-Za-z0-9_-]{39,50}"), 0.99),
    ("NPM_TOKEN", ("npm_",), re.compile(r"(?<![A-Za-z0-9])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])"), 0.98),
    ("DATABRICKS_TOKEN", ("dapi",), re.compile(r"(?<![A-Za-z0-9])dapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])"), 0.95),
    ("JWT", ("eyj",), re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.?[A-Za-z0-9_-]*"), 0.95),
    ("AZURE_CLIENT_SECRET", ("q~",), re.compile(r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])"), 0.95),
    ("SOURCEGRAPH_TOKEN", ("sgp_",), re.compile(r"(?<![A-Za-z0-9_])sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}(?![A-Za-z0-9])"), 0.98),
    ("NOTION_TOKEN", ("ntn_",), re.compile(r"(?<![A-Za-z0-9_])ntn_\d{11}[A-Za-z0-9]{35}(?![A-Za-z0-9])"), 0.98),
    ("FACEBOOK_ACCESS_TOKEN", ("|", "%7c"), re.compile(r"(?<![0-9])\d{15,16}(?:\||%7C)[0-9A-Za-z_-]{27,40}(?![0-9A-Za-z_-])"), 0.95),
    # Credentials handed to a client: an Authorization header's value, curl's --user name:password.
    ("AUTHORIZATION_HEADER", ("authorization",), re.compile(r"(?i:authorization)\s*:\s*(?i:bearer|token|api-token|basic)\s+([A-Za-z0-9._~+/=-]{16,})"), 0.93),
    ("CURL_USER", ("-u", "--user"), re.compile(r"(?<![\w-])(?:-u|--user)\s*[\"']?\{?[^\s:\"'{}<>]+\}?[\"']?:[\"']?\{?([^\s\"'{}]{6,})"), 0.9),
    ("URL_WITH_CREDENTIALS", ("://",), re.compile(r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@]{1,64}:([^\s/]{3,128})@[^\s/@]+"), 0.95),
]

# "password: X", "Passwort ist X", "mot de passe est X", ... and config assignments.
_SECRET_WORDS = (
    r"password|passwd|pwd|passphrase|pass|secret|client_secret|secret_key|api[_-]?key|apikey|access[_-]?key|"
    r"auth[_-]?token|access[_-]?token|token|credentials?|private[_-]?key|"
    r"passwort|kennwort|mot de passe|contraseña|clave|senha|wachtwoord|hasło|haslo|пароль|パスワード|密码|密碼|"
    r"كلمة المرور|كلمة السر|पासवर्ड|şifre|sifre|parola|password dell'account|la password"
)
ASSIGNMENT = re.compile(
    rf"(?:{_SECRET_WORDS})[A-Za-z0-9_]*[\"']?\s*(?:=|:|：|=>|:=)\s*[\"'`]?([^\s\"'`,;]{{6,200}})",
    re.IGNORECASE,
)
PLACEHOLDER = re.compile(
    r"x{4,}|X{4,}|\*{3,}|\.{3}|<[^>]*>|\$\{[^}]*\}|\{\{[^}]*\}\}|^\$[A-Za-z_]|%\([A-Za-z_]+\)s|%s\b|your[_-]?|_here\b|"
    r"example|EXAMPLE|dummy|changeme|change_me|placeholder|redacted|sample|fake|test123|abc123|123456|"
    r"(?-i:^(?:[A-Z0-9]+_)+[A-Z0-9]+$)|^\$|not_secret|os\.environ|getenv|process\.env|ENV\[|secrets\.|vault:|^null$|^none$|^true$|^false$",
    re.IGNORECASE,
)
RUN_TOGETHER = re.compile(r"HERE|STRING|RANDOM|TOKEN|SECRET|INSERT|REPLACE|YOUR|VALUE|PASSWORD|APIKEY")
HEX_OR_UUID = re.compile(r"^(?:[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{64}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$", re.I)


def entropy(value: str) -> float:
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values()) if n else 0.0


def is_placeholder(value: str) -> bool:
    if PLACEHOLDER.search(value):
        return True
    core = re.sub(r"^[a-z]{2,6}[_-]", "", value)  # ghp_, sk_, hf_ ...
    if len(set(core.lower())) <= 3 or (len(core) >= 20 and entropy(core) < 3.0):  # a filler like 5555dAAAAaaaa
        return True
    # Placeholder words run together in capitals ("xoxp-1-RANDOMSTRINGHERE", "sk_live_INSERTKEYHERE").
    if any(len(part) >= 10 and part.isalpha() and part.isupper() and RUN_TOGETHER.search(part)
           for part in re.split(r"[^A-Za-z0-9]+", core)):
        return True
    return bool(HEX_OR_UUID.match(value))


def is_key_placeholder(value: str) -> bool:
    """For a value that is a key by where it stands (a header, "api_key: ..."): hex and UUIDs count."""
    return is_placeholder(value) and not (HEX_OR_UUID.match(value) and entropy(value) >= 3.0)


def _looks_like_password(value: str) -> bool:
    """A value near a password word that could be live: mixed character classes, not a word or a variable."""
    value = value.strip("\"'`()[]{}«»“”=").rstrip(".,;:?!)")
    if len(value) < 6 or is_placeholder(value) or "://" in value or re.search(r"[<>\[\]()]", value):
        return False
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value) and not re.search(r"\d", value):
        return False  # an identifier or a variable
    classes = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"\d", r"[^\w\s]|_"))
    return classes >= 3 or (len(value) >= 12 and classes >= 2 and bool(re.search(r"\d", value)) and entropy(value) >= 3.2)


_WORD = re.compile(rf"(?<![A-Za-z0-9])(?:{_SECRET_WORDS}|كلمة مرور)(?:si|sı|i|ı|s|u|ü)?(?![A-Za-z0-9])", re.IGNORECASE)


def _inside_url(text: str, position: int) -> bool:
    """Whether `position` is inside a link: the run of non-space characters before it holds "://" or starts with www."""
    start = position
    while start > 0 and position - start < 300 and not text[start - 1].isspace():
        start -= 1
    token = text[start:position]
    return "://" in token or token.lower().startswith("www.")


def _looks_like_password_in_prose(value: str) -> bool:
    """Stricter than in an assignment: prose has hyphenated words, handles and HTML entities."""
    value = value.rstrip(".,;:?!)")
    if len(value) < 8 or re.search(r"&#|#x|\.[A-Za-z]{2,}\b|^[#@]|/", value):
        return False
    has_symbol = bool(re.search(r"[^\w\s]|_", value))
    mixed_case = bool(re.search(r"[a-z]", value) and re.search(r"[A-Z]", value))
    if not re.search(r"\d", value):  # no digit: only with upper, lower and a symbol that no word holds
        return len(value) >= 10 and mixed_case and bool(re.search(r"[!@#$%^&*+=?~]", value)) and "\\" not in value and _looks_like_password(value)
    return _looks_like_password(value) and (has_symbol or mixed_case)
_TOKEN = re.compile(r"[!#-&(-+\--9<-~]+")  # a run of printable ASCII but quotes, comma and colon


def detect(text: str) -> list[Finding]:
    found: list[Finding] = []

    def add(kind: str, start: int, end: int, score: float):
        if not any(start < f.end and f.start < end for f in found):
            found.append(Finding("secrets", kind, start, end, score, text[start:end]))

    lowered = text.lower()
    for kind, keywords, pattern, score in RULES:
        if not any(k in lowered for k in keywords):
            continue
        for m in pattern.finditer(text):
            value = m.group()
            if kind in ("URL_WITH_CREDENTIALS", "AUTHORIZATION_HEADER", "CURL_USER"):
                password = m.group(1)
                if is_key_placeholder(password) or password.startswith("$"):
                    continue
            elif kind == "PRIVATE_KEY":
                if re.search(r"\.\.\.|x{6,}|<[^>]+>", value[40:200]):
                    continue
            elif is_placeholder(value) and kind != "STRIPE_KEY":
                continue
            elif kind == "STRIPE_KEY" and (PLACEHOLDER.search(value) or len(set(value[8:])) <= 4):
                continue
            add(kind, m.start(), m.end(), score)
    for m in ASSIGNMENT.finditer(text):
        key_word = re.search(r"key|token|secret", m.group(0)[: m.start(1) - m.start()], re.IGNORECASE)
        if _looks_like_password(m.group(1)) or (key_word and HEX_OR_UUID.match(m.group(1)) and not is_key_placeholder(m.group(1))):
            stripped = m.group(1).rstrip(".,;)]}")
            add("PASSWORD", m.start(1), m.start(1) + len(stripped), 0.9)
    for m in _WORD.finditer(text):  # "the password of the VPN account is X" in any language: the next mixed token
        if _inside_url(text, m.start()):
            continue  # "https://example.com/password-reset?t=b81e44": a link, not a password named in prose
        window_start = m.end()
        window = text[window_start:window_start + 60]
        for token in _TOKEN.finditer(window):
            if _looks_like_password_in_prose(token.group()):
                value = token.group().rstrip(".,;:?!)")
                start = window_start + token.start() + (len(token.group()) - len(token.group().lstrip("\"'`([{«“")))
                add("PASSWORD", start, window_start + token.start() + len(value), 0.85)
                break
    found.sort(key=lambda f: f.start)
    return found
