"""Structured personal data: e-mail, phone, payment card, IBAN, national ids, IP and crypto addresses.

Every number-shaped finding must pass its checksum (Luhn, mod-97, the id's own check digit) or,
for a phone, `phonenumbers`' validity rules; national ids whose checksum is weak (a 9 to 12 digit
run) also need a word naming the id nearby. That is what keeps order numbers, ISBNs, tracking
codes and versions quiet.
"""

import hashlib
import ipaddress
import re

import phonenumbers
from stdnum import iban as std_iban
from stdnum import luhn

from guardrails.engine.findings import Finding

# Measured precision per type on the calibration split (guardrails/models/calibration.json refreshes them).
DEFAULT_SCORES = {
    "EMAIL_ADDRESS": 0.99,
    "PHONE_NUMBER": 0.95,
    "CREDIT_CARD": 0.99,
    "IBAN_CODE": 0.99,
    "NATIONAL_ID": 0.97,
    "IP_ADDRESS": 0.95,
    "CRYPTO": 0.98,
}

EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@(?:[\w-]{1,63}\.)+[^\W\d_]{2,24}(?![\w@])", re.UNICODE)
CARD = re.compile(r"(?<![\d\w])(?:\d[ -]?){12,18}\d(?![\d\w])")
IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]){11,30}(?![A-Za-z0-9])")
IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\w|\.\d)")
IPV6 = re.compile(r"(?<![\w:])(?:[0-9A-Fa-f]{1,4}:){2,7}[0-9A-Fa-f:]{1,}(?![\w:])|(?<![\w:])::(?:[0-9A-Fa-f]{1,4}:?){1,7}(?![\w:])")
BTC_BASE58 = re.compile(r"(?<![A-Za-z0-9])[13][1-9A-HJ-NP-Za-km-z]{25,34}(?![A-Za-z0-9])")
BTC_BECH32 = re.compile(r"(?<![A-Za-z0-9])(?:bc1|tb1)[02-9ac-hj-np-z]{11,71}(?![A-Za-z0-9])", re.IGNORECASE)
ETH = re.compile(r"(?<![A-Za-z0-9])0x[0-9a-fA-F]{40}(?![A-Za-z0-9])")
VERSION_BEFORE = re.compile(r"(?:v|version|versión|versione|versão|wersja|версия|sürüm|バージョン|版本)\s*$", re.IGNORECASE)

# National ids: (compiled pattern, validator, needs a naming word nearby)
_ID_WORDS = re.compile(
    r"\b(?:ssn|social security|national insurance|nhs|bsn|burgerservicenummer|sofinummer|pesel|kimlik|t\.?c\.? no|"
    r"steuer-?id|steuer|idnr|identifikationsnummer|aadhaar|aadhar|nir|sécurité sociale|securite sociale|snils|cpf|dni|"
    r"nie|nif|codice fiscale|emirates id|national id|id number|identity number|personal number|personnummer|"
    r"número de identidad|numero di identificazione|identiteitsnummer|dowód|numer identyfikacyjny|passport|"
    r"tax id|tax number|снилс|инн|паспорт)\b|आधार|マイナンバー|個人番号|身份证|居民身份|الهوية",
    re.IGNORECASE,
)
PHONE_WORDS = re.compile(
    r"\b(?:tel|tél|phone|call|ring|text|whatsapp|mobile|cell|reach|telefon|telefono|teléfono|telefone|ligue|"
    r"appelle|appelez|portable|anrufen|ruf|handy|chiama|cellulare|bel|bereiken|zadzwoń|dzwoń|numer|номер|"
    r"позвони|звони|телефон|ara|arayın|numara)\b|電話|携帯|电话|手机|اتصل|هاتف|फ़ोन|फोन|कॉल",
    re.IGNORECASE,
)


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _valid_ssn(v: str) -> bool:
    from stdnum.us import ssn

    return ssn.is_valid(v)


def _valid_module(path: str):
    def check(v: str) -> bool:
        import importlib

        try:
            return bool(importlib.import_module(path).is_valid(v))
        except Exception:
            return False

    return check


def _valid_emirates(v: str) -> bool:
    d = _digits(v)
    return len(d) == 15 and d.startswith("784") and luhn.is_valid(d)


def _valid_snils(v: str) -> bool:
    d = _digits(v)
    if len(d) != 11:
        return False
    total = sum(int(c) * (9 - i) for i, c in enumerate(d[:9]))
    check = total % 101 if total > 100 else total
    if check == 100:
        check = 0
    return check == int(d[9:])


def _valid_cn_ric(v: str) -> bool:
    v = v.upper()
    if len(v) != 18 or not v[:17].isdigit():
        return False
    weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
    check = "10X98765432"[sum(int(c) * w for c, w in zip(v[:17], weights, strict=False)) % 11]
    return check == v[17] and 1900 <= int(v[6:10]) <= 2100


def _valid_mynumber(v: str) -> bool:
    d = _digits(v)
    if len(d) != 12:
        return False
    body = [int(c) for c in d[:11]][::-1]
    total = sum(n * (i + 2 if i < 6 else i - 4) for i, n in enumerate(body))
    rem = total % 11
    check = 0 if rem <= 1 else 11 - rem
    return check == int(d[11])


NATIONAL_IDS = [
    (re.compile(r"(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])"), _valid_ssn, False),
    (re.compile(r"(?<![\d.])\d{3}\.\d{3}\.\d{3}-\d{2}(?!\d)"), _valid_module("stdnum.br.cpf"), False),
    (re.compile(r"(?<![\d-])\d{3}-\d{3}-\d{3}[ -]\d{2}(?!\d)"), _valid_snils, False),
    (re.compile(r"(?<!\d)784-?\d{4}-?\d{7}-?\d(?!\d)"), _valid_emirates, False),
    (re.compile(r"(?<!\d)[12] ?\d{2} ?\d{2} ?(?:\d{2}|2A|2B) ?\d{3} ?\d{3} ?\d{2}(?!\d)"), _valid_module("stdnum.fr.nir"), False),
    (re.compile(r"(?<![\dA-Za-z])\d{17}[\dXx](?![\dA-Za-z])"), _valid_cn_ric, False),
    (re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{6}\d{2}[A-Za-z]\d{2}[A-Za-z]\d{3}[A-Za-z](?![A-Za-z0-9])"), _valid_module("stdnum.it.codicefiscale"), False),
    (re.compile(r"(?<![A-Za-z0-9])[XYZxyz]\d{7}-?[A-Za-z](?![A-Za-z0-9])"), _valid_module("stdnum.es.nie"), False),
    (re.compile(r"(?<![A-Za-z0-9])\d{7,8}-?[A-Za-z](?![A-Za-z0-9])"), _valid_module("stdnum.es.dni"), True),
    (re.compile(r"(?<![\w:-])\d{4}[ :-]?\d{4}[ :-]?\d{4}(?![\w:-])"), lambda v: _valid_module("stdnum.in_.aadhaar")(v) or _valid_mynumber(v), True),
    (re.compile(r"(?<![\w-])\d{3}[ -]?\d{3}[ -]?\d{4}(?![\w-])"), _valid_module("stdnum.gb.nhs"), True),
    (re.compile(r"(?<!\w)\d{2} ?\d{3} ?\d{3} ?\d{3}(?!\w)"), lambda v: any(_valid_module(m)(v) for m in ("stdnum.de.idnr", "stdnum.pl.pesel", "stdnum.tr.tckimlik")), True),
    (re.compile(r"(?<![\w-])\d{9}(?![\w-])"), lambda v: _valid_module("stdnum.nl.bsn")(v) or _valid_ssn(v), True),
]

CARD_PREFIXES = re.compile(r"^(?:4|5|2[2-7]|3[0-9]|6)")
# How card numbers are printed when they are grouped: fours (the last group shorter), or 4-6-5 / 4-6-4
# (American Express, Diners). "250-1234567-8901234" is an order number even when its Luhn sum holds.
CARD_GROUPS = re.compile(r"^(?:\d{4}(?:[ -]\d{4}){2,3}(?:[ -]\d{1,3})?|\d{4}[ -]\d{6}[ -]\d{4,5})$")

LANG_REGIONS = {
    "en": ["US", "GB"], "de": ["DE"], "fr": ["FR"], "es": ["ES"], "pt": ["BR", "PT"], "it": ["IT"], "nl": ["NL"],
    "pl": ["PL"], "ru": ["RU"], "ja": ["JP"], "zh": ["CN"], "ar": ["AE", "SA"], "hi": ["IN"], "tr": ["TR"],
}


def _b58decode(s: str) -> bytes | None:
    alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    n = 0
    for c in s:
        i = alphabet.find(c)
        if i < 0:
            return None
        n = n * 58 + i
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    pad = len(s) - len(s.lstrip("1"))
    return b"\0" * pad + raw


def _valid_base58check(s: str) -> bool:
    raw = _b58decode(s)
    if raw is None or len(raw) != 25:
        return False
    return hashlib.sha256(hashlib.sha256(raw[:-4]).digest()).digest()[:4] == raw[-4:]


def _valid_bech32(s: str) -> bool:
    charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
    s = s.lower()
    pos = s.rfind("1")
    hrp, data = s[:pos], s[pos + 1:]
    try:
        values = [charset.index(c) for c in data]
    except ValueError:
        return False
    gen = [0x3B6A57B2, 0x26508E6D, 0x1EA119FA, 0x3D4233DD, 0x2A1462B3]
    chk = 1
    for v in [ord(x) >> 5 for x in hrp] + [0] + [ord(x) & 31 for x in hrp] + values:
        top = chk >> 25
        chk = (chk & 0x1FFFFFF) << 5 ^ v
        for i in range(5):
            chk ^= gen[i] if ((top >> i) & 1) else 0
    return chk in (1, 0x2BC830A3)


_ANY_DIGIT = re.compile(r"\d")
_DIGITS = re.compile(r"\d+")
# Every national id pattern holds a digit, and none is longer than 24 characters: each is searched only
# within this many characters of a digit run (0.9 instead of 2.0 ms on 2,000 characters of prose).
_ID_REACH = 32


def _digit_regions(text: str) -> list[tuple[int, int]]:
    """The spans of `text` within _ID_REACH characters of a digit run, overlapping ones merged."""
    regions: list[tuple[int, int]] = []
    for m in _DIGITS.finditer(text):
        lo, hi = max(0, m.start() - _ID_REACH), min(len(text), m.end() + _ID_REACH)
        if regions and lo <= regions[-1][1]:
            regions[-1] = (regions[-1][0], hi)
        else:
            regions.append((lo, hi))
    return regions
PHONE_CANDIDATE = re.compile(r"\+?\(?\d[\d \t().\-/]{4,22}\d")
DATE_LIKE = re.compile(r"^\d{1,4}[./-]\d{1,2}[./-]\d{1,4}$")


def _not_a_phone(raw: str) -> bool:
    digits = _digits(raw)
    return bool(DATE_LIKE.match(raw.strip())) or set(digits) <= {"0", "1"} and len(digits) > 8


# Words that name a number as something other than a phone: an order, invoice, parcel or booking.
REFERENCE_WORDS = re.compile(
    r"\b(?:order|invoice|tracking|reference|ref|ticket|case|booking|receipt|bestellung|bestellnummer|rechnung|"
    r"sendung|auftrag|commande|facture|colis|pedido|factura|fatura|encomenda|ordine|fattura|spedizione|"
    r"bestelling|factuur|zending|zamówienie|zamówienia|faktura|przesyłka|заказ|заказа|счёт|счет|накладная|"
    r"sipariş|siparis|fatura|kargo)\w*|注文|订单|發票|发票|快递|运单|الطلب|طلب|فاتورة|शिपमेंट|ऑर्डर|चालान",
    re.IGNORECASE,
)


# Scripts written without spaces: a number right after one of their characters starts a new token.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uff00-\uffef]")


def _continues_a_word(text: str, start: int) -> bool:
    """Digits glued to the end of a word ("ab0301234567"), but not after Japanese or Chinese text."""
    if not start:
        return False
    previous = text[start - 1]
    return (previous.isalnum() or previous == "_") and not _UNSPACED.match(previous)


def _glued_to_identifier(text: str, start: int, end: int) -> bool:
    """Digits that continue a token: INV-2026-004512, AB/2026/0007, 2026-004512-X."""
    before = text[start - 2:start] if start >= 2 else ""
    after = text[end:end + 2]
    return bool(re.fullmatch(r"[A-Za-z0-9][-/#]", before) or re.match(r"[-/#][A-Za-z0-9]|[A-Za-z0-9_]", after))


def _named_as_reference(text: str, start: int) -> bool:
    """A number right after an order, invoice or parcel word (and no phone word in between)."""
    window = text[max(0, start - 30):start]
    refs = list(REFERENCE_WORDS.finditer(window))
    return bool(refs) and not PHONE_WORDS.search(window[refs[-1].end():])


def _in_url_userinfo(text: str, start: int) -> bool:
    """An address that is really the `user:password@host` of a URL."""
    head = text[max(0, start - 200):start]
    token = re.split(r"\s", head)[-1] if head else ""
    return "://" in token


def _near_id_word(text: str, start: int) -> bool:
    return bool(_ID_WORDS.search(text[max(0, start - 60):start]))


def detect(text: str, *, language: str = "", phone_regions: list[str] | None = None, types: set[str] | None = None) -> list[Finding]:
    """Every structured PII span in `text`, one finding per span (the most specific type wins)."""
    found: list[Finding] = []
    want = types or set(DEFAULT_SCORES)

    def add(kind: str, start: int, end: int, **meta):
        if kind in want:
            found.append(Finding("pii", kind, start, end, DEFAULT_SCORES[kind], text[start:end], meta))

    if "@" in text:
        for m in EMAIL.finditer(text):
            if _in_url_userinfo(text, m.start()) or ".." in m.group() or m.group().startswith("."):
                continue
            add("EMAIL_ADDRESS", m.start(), m.end(), normalized=m.group().lower())
    has_digit = bool(_ANY_DIGIT.search(text))
    if has_digit:
        for m in IBAN.finditer(text):
            candidate = m.group()
            while len(candidate) >= 15:
                if std_iban.is_valid(candidate, check_country=False):
                    add("IBAN_CODE", m.start(), m.start() + len(candidate))
                    break
                if " " not in candidate:
                    break
                candidate = candidate.rsplit(" ", 1)[0]
        for m in CARD.finditer(text):
            d = _digits(m.group())
            grouped = not m.group().isdigit()
            if (13 <= len(d) <= 19 and CARD_PREFIXES.match(d) and luhn.is_valid(d) and len(set(d)) > 1
                    and (not grouped or CARD_GROUPS.match(m.group()))):
                add("CREDIT_CARD", m.start(), m.end())
        regions = _digit_regions(text)
        for pattern, valid, needs_word in NATIONAL_IDS:
            # finditer(text, lo, hi) still sees the characters before lo for the lookbehinds; a match cannot
            # end at hi unless hi is the end of the text (a digit is at least _ID_REACH characters before hi).
            for m in (m for lo, hi in regions for m in pattern.finditer(text, lo, hi)):
                value = m.group()
                if re.fullmatch(r"[\d :.-]+", value):
                    value = _digits(value) if pattern.pattern.find("\\.") < 0 or len(_digits(value)) != 11 else value
                if valid(value) and (not needs_word or _near_id_word(text, m.start())):
                    add("NATIONAL_ID", m.start(), m.end())
        for m in IPV4.finditer(text):
            try:
                addr = ipaddress.ip_address(m.group())
            except ValueError:
                continue
            if m.start() > 0 and text[m.start() - 1] == "@":
                continue  # the host of a URL with credentials: the secrets detector owns it
            if VERSION_BEFORE.search(text[max(0, m.start() - 12):m.start()]):
                continue
            add("IP_ADDRESS", m.start(), m.end(), private=addr.is_private or addr.is_loopback or addr.is_reserved)
        regions = list(dict.fromkeys(list(phone_regions or []) + LANG_REGIONS.get(language, []) + ["US"]))
        seen: set[tuple[int, int]] = set()
        has_phone_word = bool(PHONE_WORDS.search(text))
        # phonenumbers scans only the digit runs that could be a phone number, not the whole text.
        for candidate in PHONE_CANDIDATE.finditer(text):
            if len(_digits(candidate.group())) < 6:
                continue
            lo, hi = max(0, candidate.start() - 1), min(len(text), candidate.end() + 1)
            piece = text[lo:hi]
            for region in regions:
                if any(lo <= a and b <= hi for a, b in seen):
                    break  # this run is already a phone number in an earlier region
                try:
                    for match in phonenumbers.PhoneNumberMatcher(piece, region, leniency=phonenumbers.Leniency.VALID, max_tries=20):
                        start, end = lo + match.start, lo + match.end
                        if (start, end) in seen or _not_a_phone(match.raw_string) or _continues_a_word(text, start):
                            continue
                        if _glued_to_identifier(text, start, end):
                            continue
                        if not match.raw_string.startswith(("+", "(")) and _named_as_reference(text, start):
                            continue
                        seen.add((start, end))
                        e164 = phonenumbers.format_number(match.number, phonenumbers.PhoneNumberFormat.E164)
                        add("PHONE_NUMBER", start, end, normalized=e164)
                    if not has_phone_word:
                        continue
                    # A number introduced as a phone ("call me on …"): possible numbers count too.
                    for match in phonenumbers.PhoneNumberMatcher(piece, region, leniency=phonenumbers.Leniency.POSSIBLE, max_tries=20):
                        start, end = lo + match.start, lo + match.end
                        near = PHONE_WORDS.search(text[max(0, start - 50):start])
                        if not near or (start, end) in seen or _not_a_phone(match.raw_string):
                            continue
                        if len(_digits(match.raw_string)) < 8 or _continues_a_word(text, start):
                            continue
                        if _glued_to_identifier(text, start, end):
                            continue
                        seen.add((start, end))
                        e164 = phonenumbers.format_number(match.number, phonenumbers.PhoneNumberFormat.E164)
                        add("PHONE_NUMBER", start, end, normalized=e164, possible=True)
                except Exception:  # a library edge case must not fail the evaluation
                    continue
    if ":" in text:
        for m in IPV6.finditer(text):
            try:
                addr = ipaddress.IPv6Address(m.group())
            except ValueError:
                continue
            add("IP_ADDRESS", m.start(), m.end(), private=addr.is_private or addr.is_loopback)
    for m in BTC_BASE58.finditer(text):
        if _valid_base58check(m.group()):
            add("CRYPTO", m.start(), m.end())
    for m in BTC_BECH32.finditer(text):
        if _valid_bech32(m.group()):
            add("CRYPTO", m.start(), m.end())
    for m in ETH.finditer(text):
        add("CRYPTO", m.start(), m.end())
    return _dedupe(found)


_PRIORITY = ["EMAIL_ADDRESS", "IBAN_CODE", "CREDIT_CARD", "CRYPTO", "NATIONAL_ID", "IP_ADDRESS", "PHONE_NUMBER"]


def _dedupe(found: list[Finding]) -> list[Finding]:
    found.sort(key=lambda f: (_PRIORITY.index(f.type), -(f.end - f.start)))
    kept: list[Finding] = []
    for f in found:
        if not any(f.start < k.end and k.start < f.end for k in kept):
            kept.append(f)
    kept.sort(key=lambda f: f.start)
    return kept
