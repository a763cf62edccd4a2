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


def features(text: str) -> tuple[np.ndarray, np.ndarray]:
    """(indices, values) of the L2-normalised, log-scaled hashed n-gram counts of `text`."""
    text = _SPACES.sub(" ", text.lower()).strip()
    counts: dict[int, float] = {}
    crc = zlib.crc32
    padded = f" {text} "
    for n in (2, 3, 4):
        for i in range(len(padded) - n + 1):
            h = crc(padded[i:i + n].encode()) & (DIM - 1)
            counts[h] = counts.get(h, 0.0) + 1.0
    words = _WORDS.findall(text)
    for i, word in enumerate(words):
        h = crc(b"w:" + word.encode()) & (DIM - 1)
        counts[h] = counts.get(h, 0.0) + 1.0
        if i:
            h = crc(f"b:{words[i - 1]} {word}".encode()) & (DIM - 1)
            counts[h] = counts.get(h, 0.0) + 1.0
    if not counts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    idx = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
    val = np.log1p(np.fromiter(counts.values(), dtype=np.float32, count=len(counts)))
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

    def score(self, texts: list[str]) -> float:
        """The calibrated probability of the class for the worst window of any of `texts`."""
        best = max(self.raw(w) for t in texts if t for w in windows(t)) if any(texts) else self.bias
        return self.probability_of_raw(best)


@lru_cache(maxsize=4)
def head(name: str) -> Head | None:
    path = MODELS / f"{name}.npz"
    if not path.exists():
        return None
    data = np.load(path)
    return Head(name, data["weights"], float(data["bias"]), float(data["platt_a"]), float(data["platt_b"]), float(data["threshold"]))
