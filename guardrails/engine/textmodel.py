"""Multilingual text classifiers: hashed character and word n-grams into a logistic regression.

Character n-grams work in every script without a tokenizer, run in about a millisecond, and the
weights are a small file trained by `guardrails/train.py` from the corpus; nothing is downloaded.
A long text is scored in overlapping windows and the highest window counts, so an injection
buried in a long document is not diluted by the rest.
"""

import math
import re
import zlib
from functools import lru_cache
from pathlib import Path

import numpy as np

DIM = 1 << 18
MODELS = Path(__file__).resolve().parent.parent / "models"
WINDOW = 600
STEP = 450
_WORDS = re.compile(r"\w+", re.UNICODE)
_SPACES = re.compile(r"\s+")


_MULT = np.uint64(0x9E3779B97F4A7C15)
_BASE = np.uint64(1_000_003)


def _mix(h: np.ndarray) -> np.ndarray:
    h = h ^ (h >> np.uint64(29))
    h = h * _MULT
    return h ^ (h >> np.uint64(32))


def features(text: str) -> tuple[np.ndarray, np.ndarray]:
    """(indices, values) of the L2-normalised, log-scaled hashed n-gram counts of `text`.

    Character 2-, 3- and 4-grams (rolling hashes over code points, vectorised) plus word unigrams
    and bigrams."""
    text = _SPACES.sub(" ", text.lower()).strip()
    if not text:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    cp = np.frombuffer(f" {text} ".encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    parts = []
    h = cp.copy()
    for n in (2, 3, 4):
        if len(cp) < n:
            break
        h = h[:-1] * _BASE + cp[n - 1:]
        parts.append(_mix(h + np.uint64(n)))
    words = _WORDS.findall(text)
    if words:
        ids = np.array([zlib.crc32(w.encode()) for w in words], dtype=np.uint64)
        parts.append(_mix(ids + np.uint64(7)))
        if len(ids) > 1:
            parts.append(_mix(ids[:-1] * _BASE + ids[1:] + np.uint64(11)))
    all_hashes = (np.concatenate(parts) & np.uint64(DIM - 1)).astype(np.int64)
    idx, counts = np.unique(all_hashes, return_counts=True)
    val = np.log1p(counts.astype(np.float32))
    val /= float(np.sqrt((val * val).sum())) or 1.0
    return idx, val


def windows(text: str) -> list[str]:
    if len(text) <= WINDOW:
        return [text]
    return [text[i:i + WINDOW] for i in range(0, max(1, len(text) - WINDOW + STEP), STEP)]


class Head:
    """One trained head: weights, bias, and the Platt mapping fitted on the calibration split."""

    def __init__(self, name: str, weights: np.ndarray, bias: float, platt_a: float, platt_b: float, threshold: float):
        self.name = name
        self.weights = weights.astype(np.float32)
        self.bias = bias
        self.platt_a = platt_a
        self.platt_b = platt_b
        self.threshold = threshold

    def raw(self, text: str) -> float:
        idx, val = features(text)
        return float(self.weights[idx] @ val) + self.bias if idx.size else self.bias

    def probability_of_raw(self, raw: float) -> float:
        z = self.platt_a * raw + self.platt_b
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def raw_of(self, feats: tuple[np.ndarray, np.ndarray]) -> float:
        idx, val = feats
        return float(self.weights[idx] @ val) + self.bias if idx.size else self.bias

    def score(self, texts: list[str], feats: list | None = None) -> float:
        """The calibrated probability of the class for the worst window of any of `texts`."""
        feats = feats if feats is not None else window_features(texts)
        best = max((self.raw_of(f) for f in feats), default=self.bias)
        return self.probability_of_raw(best)


def window_features(texts: list[str]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Features of every window of every text, computed once and shared by the heads."""
    return [features(w) for t in texts if t for w in windows(t)]


@lru_cache(maxsize=4)
def head(name: str) -> Head | None:
    path = MODELS / f"{name}.npz"
    if not path.exists():
        return None
    data = np.load(path)
    return Head(name, data["weights"], float(data["bias"]), float(data["platt_a"]), float(data["platt_b"]), float(data["threshold"]))
