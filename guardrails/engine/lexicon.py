"""Explicit insults, slurs and threats per language: a high-precision backstop for the toxicity head.

Only words that insult or threaten a person on their own. Profanity in a neutral sentence
("this printer is shit") and violent words in a harmless sense ("kill the process") are not here:
the corpus labels those as not toxic. A hit lifts the toxicity score to just above the threshold,
and the reason says which list matched. Content warning: this file lists offensive words."""

import re

WORDS = {
    "en": ["idiot", "moron", "imbecile", "retard", "retarded", "you bitch", "stupid bitch", "bastard", "asshole", "dickhead", "motherfucker",
           "fuck you", "piece of shit", "scumbag", "cunt", "whore", "slut", "i will kill you", "i'll kill you",
           "kill yourself", "go die", "shut the fuck up", "fucking idiot", "stupid bitch", "dumbass", "faggot", "nigger"],
    "de": ["idiot", "arschloch", "wichser", "hurensohn", "fotze", "schlampe", "missgeburt", "vollidiot", "ich bring dich um",
           "halt die fresse", "verpiss dich", "drecksau", "spast", "schwuchtel", "penner", "dummkopf"],
    "fr": ["connard", "connasse", "salope", "pute", "enculé", "fils de pute", "abruti", "ta gueule", "je vais te tuer",
           "nique ta mère", "débile", "crétin", "pétasse", "pédé", "sale con"],
    "es": ["idiota", "imbécil", "gilipollas", "cabrón", "hijo de puta", "puta", "pendejo", "estúpido", "estúpida",
           "te voy a matar", "maricón", "zorra", "vete a la mierda", "subnormal", "malparido"],
    "pt": ["idiota", "imbecil", "otário", "filho da puta", "puta", "vagabunda", "babaca", "vou te matar", "arrombado",
           "viado", "vai se foder", "desgraçado", "cretino", "burro do caralho"],
    "it": ["idiota", "imbecille", "stronzo", "stronza", "cretino", "figlio di puttana", "puttana", "coglione", "vaffanculo",
           "ti ammazzo", "troia", "bastardo", "deficiente", "frocio"],
    "nl": ["idioot", "klootzak", "hoer", "kankerlijer", "ik maak je af", "tyfuslijer", "mongool", "sukkel",
           "kutwijf", "flikker", "debiel"],
    "pl": ["idiota", "debil", "kurwa", "skurwysyn", "chuj", "pierdolony", "zabiję cię", "suka", "cwel", "pedał", "dziwka",
           "kretyn", "spierdalaj"],
    "ru": ["идиот", "дебил", "сука", "блядь", "блять", "ублюдок", "мудак", "урод", "тварь", "убью тебя", "я тебя убью",
           "пидор", "шлюха", "придурок", "кретин", "мразь", "чмо", "заткнись"],
    "tr": ["aptal", "salak", "gerizekalı", "orospu", "orospu çocuğu", "piç", "şerefsiz", "seni öldüreceğim", "siktir",
           "amına", "yavşak", "pezevenk", "ibne", "göt"],
}
# Scripts without spaces between words, and words whose forms a suffix list would not cover: substrings.
SUBSTRINGS = {
    "ja": ["バカ", "馬鹿", "死ね", "クズ", "アホ", "ブス", "殺すぞ", "キモい", "きもい", "ぶっ殺"],
    "zh": ["傻逼", "傻b", "他妈的", "操你", "去死", "混蛋", "王八蛋", "贱人", "婊子", "白痴", "废物", "脑残", "杀了你"],
    "ar": ["غبي", "حقير", "عاهرة", "سأقتلك", "اخرس", "منيوك", "يا حيوان", "كلب ابن كلب", "ابن الكلب", "شرموطة", "تافه"],
    "hi": ["बेवकूफ", "कमीने", "कमीना", "हरामी", "मार डालूंगा", "चूतिया", "मादरचोद", "भड़वा", "रंडी", "बेवकूफ़", "कुत्ते की औलाद"],
}

_WORD_RE = re.compile(
    r"(?<!\w)(?:" + "|".join(sorted({re.escape(w) for ws in WORDS.values() for w in ws}, key=len, reverse=True)) + r")\w{0,3}(?!\w)",
    re.IGNORECASE,
)
_SUB_RE = re.compile("|".join(sorted({re.escape(w) for ws in SUBSTRINGS.values() for w in ws}, key=len, reverse=True)))


def insults(text: str) -> list[str]:
    found = [m.group() for m in _WORD_RE.finditer(text)]
    found += [m.group() for m in _SUB_RE.finditer(text)]
    return found


# Override phrases of prompt injection ("ignore the previous instructions") per language: a backstop
# for the injection head on machine-translated attacks. Mentions inside quotes are left to the head.
OVERRIDES = [
    r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+)?(?:previous|prior|above|earlier|preceding|initial|original)\s+(?:instructions|prompts?|rules|directions|guidelines)",
    r"\bdo anything now\b",
    r"\b(?:ignorier\w*|vergiss|missachte)\s+(?:alle\s+)?(?:deine\s+|die\s+)?(?:vorherigen|bisherigen|obigen|vorigen)\s+(?:anweisungen|instruktionen|regeln|befehle)",
    r"\b(?:ignor\w+|oubli\w+)\s+(?:toutes\s+)?(?:les\s+|tes\s+|vos\s+)?instructions\s+(?:précédentes|antérieures)",
    r"\b(?:ignor\w+|olvid\w+)\s+(?:todas\s+)?(?:las\s+|tus\s+)?instrucciones\s+(?:anteriores|previas)",
    r"\b(?:ignor\w+|esque\w+|desconsider\w+)\s+(?:todas\s+)?(?:as\s+|suas\s+)?instruções\s+(?:anteriores|prévias)",
    r"\b(?:ignor\w+|dimentic\w+)\s+(?:tutte\s+)?(?:le\s+)?(?:tue\s+)?istruzioni\s+(?:precedenti|ricevute)",
    r"\b(?:negeer|vergeet)\s+(?:alle\s+)?(?:je\s+)?(?:eerdere|vorige|voorgaande)\s+instructies",
    r"\b(?:zignoruj|ignoruj|zapomnij)\s+(?:o\s+)?(?:wszystkie\s+|wszystkich\s+)?(?:poprzednie|wcześniejsze|poprzednich|wcześniejszych)\s+(?:instrukcje|polecenia|instrukcjach|poleceniach)",
    r"(?:игнорируй|проигнорируй|забудь)\s+(?:все\s+)?(?:предыдущие|прошлые|прежние)\s+(?:инструкции|указания|команды)",
    r"önceki\s+(?:tüm\s+)?(?:talimatları|komutları|talimatlarını)\s+(?:yok\s+say|görmezden\s+gel|unut)",
    r"(?:以前|これまで|前)の(?:すべての|全ての)?指示を(?:無視|忘れ)",
    r"(?:忽略|无视|忘记|忘掉)(?:之前|以前|上述|先前|前面)?(?:的)?(?:所有|全部)?(?:的)?(?:指令|指示|说明)",
    r"تجاهل\s+(?:جميع\s+|كل\s+)?(?:التعليمات|الأوامر)\s+السابقة",
    r"पिछले\s+(?:सभी\s+)?निर्देशों\s+को\s+(?:अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल)",
]
_OVERRIDE_RE = re.compile("|".join(f"(?:{p})" for p in OVERRIDES), re.IGNORECASE)


_QUOTES = "\"'«“„「『‘`"


def overrides(text: str) -> list[str]:
    """Override phrases used, not mentioned: a phrase right after an opening quote is a mention."""
    return [m.group() for m in _OVERRIDE_RE.finditer(text) if not (m.start() and text[m.start() - 1] in _QUOTES)]
