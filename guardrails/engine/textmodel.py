"""Multilingual text classifiers: hashed character and word n-grams into a logistic regression, stacked
with a logistic regression over a multilingual sentence embedding (engine/encoder.py).

Character n-grams work in every script without a tokenizer and run in about a millisecond; the
embedding carries what was learned in one language over to the others. The weights are small files
trained by `guardrails/train.py` from the corpus; nothing is downloaded.
A long text is scored in overlapping windows and the highest window counts, so an injection
buried in a long document is not diluted by the rest.
"""

import math
import re
import zlib
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

import numpy as np

DIM = 1 << 18
MODELS = Path(__file__).resolve().parent.parent / "models"
WINDOW = 600
STEP = 450
# The encoder reads one window of this size per text (it costs about a millisecond per token): about 70
# tokens of a European language. Chinese and Japanese take two or three times as many tokens a character,
# so their windows are narrower (encoder_window_size) and the encoder's token cap does not cut them.
ENCODER_WINDOW = 256
_WIDE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")
_WORDS = re.compile(r"\w+", re.UNICODE)


_MULT = np.uint64(0x9E3779B97F4A7C15)
_BASE = np.uint64(1_000_003)


def _mix(h: np.ndarray) -> np.ndarray:
    h = h ^ (h >> np.uint64(29))
    h = h * _MULT
    return h ^ (h >> np.uint64(32))


class FeatureBatch:
    """The hashed n-gram features of several texts at once, as CSR rows: text i owns
    idx[ptr[i]:ptr[i + 1]] and val[ptr[i]:ptr[i + 1]] (one vectorised pass instead of one per text)."""

    def __init__(self, ptr: np.ndarray, idx: np.ndarray, val: np.ndarray):
        self.ptr, self.idx, self.val = ptr, idx, val

    def __len__(self) -> int:
        return len(self.ptr) - 1

    def __add__(self, other: "FeatureBatch") -> "FeatureBatch":
        return FeatureBatch(np.concatenate([self.ptr, other.ptr[1:] + self.ptr[-1]]),
                            np.concatenate([self.idx, other.idx]), np.concatenate([self.val, other.val]))

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        return self.idx[self.ptr[i]:self.ptr[i + 1]], self.val[self.ptr[i]:self.ptr[i + 1]]

    def rows(self) -> np.ndarray:
        """The text each feature belongs to."""
        return np.repeat(np.arange(len(self)), np.diff(self.ptr))


def features_of(texts: list[str]) -> FeatureBatch:
    """L2-normalised, log-scaled hashed n-gram counts of each text.

    Character 2-, 3- and 4-grams (rolling hashes over code points, vectorised) plus word unigrams
    and bigrams, none across two texts. A run of Chinese or Japanese characters is not a word (those scripts
    put no space between words: the run is a whole clause, a feature only its own row has), so it is left
    to the character n-grams."""
    cleaned = [" ".join(t.lower().split()) for t in texts]  # str.split and re's \s agree on whitespace
    padded = [f" {c} " if c else "" for c in cleaned]
    cp = np.frombuffer("".join(padded).encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    owner = np.repeat(np.arange(len(texts), dtype=np.int64), [len(p) for p in padded])
    hashes, owners = [], []
    h = cp.copy()
    for n in (2, 3, 4):
        if len(cp) < n:
            break
        h = h[:-1] * _BASE + cp[n - 1:]
        inside = owner[:len(h)] == owner[n - 1:]
        hashes.append(_mix(h[inside] + np.uint64(n)))
        owners.append(owner[:len(h)][inside])
    words = [[w for w in _WORDS.findall(c) if not _WIDE.search(w)] if _WIDE.search(c) else _WORDS.findall(c)
             for c in cleaned]
    flat = [w for ws in words for w in ws]
    if flat:
        crc = {w: zlib.crc32(w.encode()) for w in set(flat)}
        ids = np.array([crc[w] for w in flat], dtype=np.uint64)
        wo = np.repeat(np.arange(len(texts), dtype=np.int64), [len(ws) for ws in words])
        hashes.append(_mix(ids + np.uint64(7)))
        owners.append(wo)
        pair = wo[:-1] == wo[1:]
        hashes.append(_mix(ids[:-1][pair] * _BASE + ids[1:][pair] + np.uint64(11)))
        owners.append(wo[:-1][pair])
    if not hashes:
        return FeatureBatch(np.zeros(len(texts) + 1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32))
    keys = np.concatenate(owners) * DIM + (np.concatenate(hashes) & np.uint64(DIM - 1)).astype(np.int64)
    keys, counts = np.unique(keys, return_counts=True)
    text_of = keys // DIM
    val = np.log1p(counts.astype(np.float32))
    norms = np.sqrt(np.bincount(text_of, weights=val * val, minlength=len(texts))).astype(np.float32)
    val /= np.where(norms > 0, norms, 1.0)[text_of]
    ptr = np.searchsorted(text_of, np.arange(len(texts) + 1))
    return FeatureBatch(ptr, keys % DIM, val)


def features(text: str) -> tuple[np.ndarray, np.ndarray]:
    """(indices, values) of the features of one text (features_of)."""
    return features_of([text]).row(0)


def windows(text: str, size: int = WINDOW, step: int = STEP) -> list[str]:
    if len(text) <= size:
        return [text]
    return [text[i:i + size] for i in range(0, max(1, len(text) - size + step), step)]


class Head:
    """One trained head: a logistic regression over the n-gram features (`weights`, `bias`), a small neural
    network over the encoder's embedding (one ReLU layer `emb_hidden`, then `emb_weights`, `emb_bias`; a
    logistic regression when there is no hidden layer), and the stack fitted out of fold that turns the two
    raw scores (logits) into a probability: sigmoid(stack_a * ngram + stack_b * embedding + stack_c).

    A text is scored by its most suspicious parts: the n-gram score is the highest over its windows, and
    the embedding is that of `encoder_window` (one per text, shared by the heads)."""

    def __init__(self, name: str, weights: np.ndarray, bias: float, emb_weights: np.ndarray, emb_bias: float,
                 stack: tuple[float, float, float], threshold: float, thresholds: dict[str, float] | None = None,
                 emb_hidden: tuple[np.ndarray, np.ndarray] | None = None):
        self.name = name
        self.weights = weights.astype(np.float32)
        self.bias = bias
        self.emb_weights = emb_weights.astype(np.float32)
        self.emb_bias = emb_bias
        self.stack = stack
        self.threshold = threshold
        self.thresholds = thresholds or {}
        self.emb_hidden = tuple(a.astype(np.float32) for a in emb_hidden) if emb_hidden is not None else None

    def threshold_in(self, language: str) -> float:
        """The threshold fitted for texts detected as `language`, else the one fitted over all languages."""
        return self.thresholds.get(language, self.threshold)

    def raws(self, batch: FeatureBatch) -> np.ndarray:
        """The n-gram raw score of every text of `batch`."""
        return np.bincount(batch.rows(), weights=self.weights[batch.idx] * batch.val, minlength=len(batch)) + self.bias

    def emb_raws(self, vectors: np.ndarray) -> np.ndarray:
        """The embedding logit of each row of `vectors`."""
        if self.emb_hidden is not None:
            vectors = np.maximum(vectors @ self.emb_hidden[0] + self.emb_hidden[1], 0.0)
        return vectors @ self.emb_weights + self.emb_bias

    def emb_raw(self, vector: np.ndarray) -> float:
        return float(self.emb_raws(vector[None])[0])

    def probability(self, ngram_raw: float, emb_raw: float) -> float:
        a, b, c = self.stack
        z = a * ngram_raw + b * emb_raw + c
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def top_raw(self, batch: FeatureBatch) -> float:
        """The highest n-gram raw score over the windows (the bias alone when there is no text)."""
        return float(self.raws(batch).max()) if len(batch) else self.bias


# Chinese and Japanese put no space after a full stop, and NFKC (normalize.py) has turned their ！？； into !?;.
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|(?<=[\u3040-\u30ff\u3400-\u9fff][!?;])|\n+")
# The injection head also scores each run of two sentences (at most MAX_SEGMENTS): an instruction planted
# at the end of an ordinary review, ticket or e-mail is not diluted by the ordinary part. (For toxicity
# the segments cost recall out of fold and on our test sets: 0.846 to 0.824, and 298 to 288 of 336.)
MAX_SEGMENTS = 24
SEGMENTED_HEADS = ("prompt_injection",)


def segments(text: str) -> list[str]:
    """Each pair of neighbouring sentences of `text`; each sentence when it has two; none when it has one."""
    sentences = [s for s in (part.strip() for part in _SENTENCE_END.split(text)) if len(s) > 1]
    if len(sentences) < 3:
        return sentences if len(sentences) == 2 else []
    return [f"{a} {b}" for a, b in zip(sentences, sentences[1:], strict=False)][:MAX_SEGMENTS]


def window_texts(texts: list[str], head_name: str = "") -> list[str]:
    """What a head's n-gram model scores: the windows of `texts`, and their segments for SEGMENTED_HEADS."""
    return [w for t in texts if t for w in (*windows(t), *(segments(t) if head_name in SEGMENTED_HEADS else ()))]


def encoder_window(texts: list[str], heads: list[Head]) -> str:
    """What the encoder reads: of the ENCODER_WINDOW-character windows of `texts`, the one with the highest
    n-gram raw score under any of `heads` ("" when there is no text). The service and the training pick
    it the same way, with every model head, whatever the rule set."""
    candidates = [w for t in texts if t for w in windows(t, *encoder_window_size(t))]
    if len(candidates) <= 1 or not heads:
        return candidates[0] if candidates else ""
    batch = features_of(candidates)
    scores = np.max([h.raws(batch) for h in heads], axis=0)
    return candidates[int(np.argmax(scores))]


def encoder_window_size(text: str) -> tuple[int, int]:
    """(size, step) in characters of the encoder's windows over `text`: ENCODER_WINDOW, narrowed by the share
    of Chinese, Japanese and Korean characters (at most 2.5 times, for text written only in them)."""
    wide = len(_WIDE.findall(text)) / len(text) if text else 0.0
    size = int(ENCODER_WINDOW / (1 + 1.5 * wide))
    return size, size * 3 // 4


def window_features(window_texts_: list[str]) -> FeatureBatch:
    """Features of every window, computed once and shared by the heads."""
    return features_of(window_texts_)


HEAD_NAMES = ("prompt_injection", "toxicity")
_trial: dict[str, Head] = {}


@contextmanager
def trial_heads(heads: dict[str, Head]):
    """Score with these heads instead of the stored ones (training runs the engine with each fold's heads)."""
    _trial.update(heads)
    try:
        yield
    finally:
        _trial.clear()


def head(name: str) -> Head | None:
    return _trial.get(name) or _stored_head(name)


def heads() -> list[Head]:
    """Every model head there is, in a fixed order."""
    return [h for h in (head(n) for n in HEAD_NAMES) if h is not None]


@lru_cache(maxsize=4)
def _stored_head(name: str) -> Head | None:
    path = MODELS / f"{name}.npz"
    if not path.exists():
        return None
    data = np.load(path)
    thresholds = dict(zip(data["threshold_langs"].tolist(), map(float, data["threshold_values"]), strict=True))
    hidden = (data["emb_hidden_weights"], data["emb_hidden_bias"]) if "emb_hidden_weights" in data else None
    return Head(name, data["weights"], float(data["bias"]), data["emb_weights"], float(data["emb_bias"]),
                tuple(float(x) for x in data["stack"]), float(data["threshold"]), thresholds, hidden)
