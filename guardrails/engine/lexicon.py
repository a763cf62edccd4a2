"""Explicit insults, slurs and threats per language: a high-precision backstop for the toxicity head.

Only words that insult or threaten a person on their own. Profanity in a neutral sentence
("this printer is shit") and violent words in a harmless sense ("kill the process") are not here:
the corpus labels those as not toxic. Threats ("i know where you live") are whole phrases, matched
without suffixes; idioms that are also harmless ("watch your back", "I'll crush you at chess") are left
out. A hit lifts the toxicity score to just above the threshold, and the reason says so. Content warning: this file lists offensive words."""

import re

from retrie.trie import Trie

WORDS = {
    "en": ["idiot", "moron", "imbecile", "retard", "retarded", "you bitch", "stupid bitch", "bastard", "asshole", "dickhead", "motherfucker",
           "fuck you", "piece of shit", "scumbag", "cunt", "whore", "slut", "kill yourself", "go die", "shut the fuck up", "fucking idiot", "stupid bitch", "dumbass", "faggot", "nigger"],
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
# Threats, matched as whole phrases (no suffixes: "i will end you" must not match "i will end your").
THREATS = {
    "en": ["i will kill you", "i'll kill you", "i know where you live", "you're a dead man", "you are a dead man", "i'm going to kill you", "gonna kill you", "i will end you", "i'll break your legs", "i will break your legs", "i'll break your neck", "i'll beat the shit out of you", "i'll kick your ass", "i'll smash your face", "i'll slit your throat", "i will hurt you", "i'll hurt you", "i'll make you pay for this", "i'll burn your house down", "i'll rip your head off"],
    "fr": ["je sais où tu habites", "je vais te défoncer", "je vais te buter", "je vais te casser la gueule", "je vais te crever", "je vais t'égorger", "t'es un homme mort", "tu es un homme mort"],
    "pt": ["eu sei onde você mora", "sei onde você mora", "sei onde tu moras", "vou quebrar a tua cara", "vou quebrar sua cara", "vou te dar uma surra", "você é um homem morto", "vou te arrebentar", "te pego lá fora"],
    "nl": ["ik weet waar je woont", "ik sla je in elkaar", "ik breek je benen", "ik steek je neer", "ik vermoord je", "ik sla je hersens in"],
    "ru": ["я знаю где ты живешь", "я знаю где ты живёшь", "я знаю, где ты живешь", "я знаю, где ты живёшь", "сломаю тебе ноги", "набью тебе морду", "я тебя урою", "ты труп", "я тебя прибью", "прибью тебя", "зарежу тебя"],
    "de": ["ich weiß wo du wohnst", "ich weiß, wo du wohnst", "ich bringe dich um", "ich werde dich umbringen", "ich werde dich töten", "ich schlag dich tot", "ich stech dich ab", "ich brech dir die beine", "ich breche dir die beine", "ich schlag dir die fresse ein", "ich polier dir die fresse"],
    "es": ["sé dónde vives", "se donde vives", "te voy a partir la cara", "te voy a romper las piernas", "te voy a reventar", "te voy a dar una paliza", "te voy a degollar", "eres hombre muerto"],
    "it": ["so dove abiti", "so dove vivi", "ti spacco la faccia", "ti rompo le gambe", "sei un uomo morto", "ti uccido", "te la faccio pagare", "ti gonfio di botte"],
    "pl": ["wiem gdzie mieszkasz", "wiem, gdzie mieszkasz", "połamię ci nogi", "rozwalę ci łeb", "obiję ci mordę", "jesteś trupem", "zajebię cię", "zatłukę cię"],
    "tr": ["nerede oturduğunu biliyorum", "seni gebertirim", "kafanı kırarım", "bacaklarını kırarım", "ağzını burnunu kırarım", "seni doğrarım", "öldürürüm seni"],
}
# Scripts without spaces between words, and words whose forms a suffix list would not cover: substrings.
SUBSTRINGS = {
    "ja": ["バカ", "馬鹿", "死ね", "クズ", "アホ", "ブス", "殺すぞ", "キモい", "きもい", "ぶっ殺"],
    "zh": ["傻逼", "傻b", "他妈的", "操你", "去死", "混蛋", "王八蛋", "贱人", "婊子", "白痴", "废物", "脑残", "杀了你"],
    "ar": ["غبي", "حقير", "عاهرة", "سأقتلك", "اخرس", "منيوك", "يا حيوان", "كلب ابن كلب", "ابن الكلب", "شرموطة", "تافه"],
    "hi": ["बेवकूफ", "कमीने", "कमीना", "हरामी", "मार डालूंगा", "चूतिया", "मादरचोद", "भड़वा", "रंडी", "बेवकूफ़", "कुत्ते की औलाद"],
}
THREAT_SUBSTRINGS = {
    "ja": ["殺してやる", "ボコボコにしてや", "住所知ってるぞ", "家知ってるぞ", "覚えてろよ", "ただじゃおかない", "痛い目に遭わせ", "刺すぞ", "殴るぞ", "ぶん殴"],
    "zh": ["我知道你住哪", "我知道你家在哪", "弄死你", "打死你", "砍死你", "打断你的腿", "废了你"],
    "ar": ["أعرف أين تسكن", "سأكسر رأسك", "سأكسر وجهك", "راح أقتلك", "سأذبحك", "هكسر دماغك"],
    "hi": ["जान से मार दूंगा", "जान से मार दूँगा", "तेरी टांगें तोड़", "हाथ पैर तोड़ दूंगा", "तुझे छोड़ूंगा नहीं", "तेरा खून कर दूंगा", "काट डालूंगा"],
}

def _trie(phrases) -> str:
    """One alternation of `phrases` as a trie (retrie): Python's re tries a flat alternation's branches one
    by one at every word start, the trie one character at a time (0.66 -> 0.15 ms on 2,000 characters)."""
    trie = Trie()
    for phrase in phrases:
        trie.add(phrase)
    return trie.pattern()


_WORD_RE = re.compile(r"(?<!\w)(?:" + _trie({w for ws in WORDS.values() for w in ws}) + r")\w{0,3}(?!\w)", re.IGNORECASE)
_THREAT_RE = re.compile(r"(?<!\w)(?:" + _trie({w for ws in THREATS.values() for w in ws}) + r")(?!\w)", re.IGNORECASE)
_SUB_RE = re.compile("|".join(sorted({re.escape(w) for ws in SUBSTRINGS.values() for w in ws}, key=len, reverse=True)))
_THREAT_SUB_RE = re.compile("|".join(sorted({re.escape(w) for ws in THREAT_SUBSTRINGS.values() for w in ws}, key=len, reverse=True)))


def insults(text: str) -> list[str]:
    """The insults and slurs of WORDS and SUBSTRINGS in `text`."""
    return [m.group() for m in _WORD_RE.finditer(text)] + [m.group() for m in _SUB_RE.finditer(text)]


def threats(text: str) -> list[str]:
    """The threat phrases of THREATS and THREAT_SUBSTRINGS in `text` (unlike an insult word, a phrase such as
    "I know where you live" is hardly ever quoted or used in jest: none occurs in a benign training row)."""
    return [m.group() for m in _THREAT_RE.finditer(text)] + [m.group() for m in _THREAT_SUB_RE.finditer(text)]


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
