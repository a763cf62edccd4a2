"""The confidence: the probability that the recommended action is the right one.

A raw number per action (noisy-OR of the blocking rules' probabilities for block, the strongest
redaction finding for redact, the product of the classifiers' "nothing here" probabilities for
allow) is mapped through an isotonic regression fitted on out-of-fold engine results against "the
action was correct" (`python -m guardrails.train`). The mapping lives in
guardrails/models/calibration.json; without it the raw number is returned.
"""

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

PATH = Path(__file__).resolve().parent.parent / "models" / "calibration.json"


def raw_confidence(action: str, results) -> float:
    if action == "block":
        miss = 1.0
        for r in results:
            if r.verdict == "fail" and r.action == "block":
                miss *= 1.0 - r.score
        return 1.0 - miss
    if action == "redact":
        return max((r.score for r in results if r.verdict == "fail" and r.action == "redact"), default=0.5)
    if action == "review":
        return max((r.score for r in results if r.verdict == "review"), default=0.5)
    clean = 1.0
    for r in results:
        if r.detector in ("prompt_injection", "toxicity"):
            clean *= 1.0 - r.score
    return clean


@lru_cache(maxsize=1)
def mapping() -> dict:
    if not PATH.exists():
        return {}
    return json.loads(PATH.read_text())


def calibrate(action: str, raw: float) -> float:
    table = mapping().get("actions", {}).get(action)
    if not table:
        return raw
    return float(np.interp(raw, table["x"], table["y"]))


def confidence(action: str, results) -> float:
    return round(min(0.999, max(0.001, calibrate(action, raw_confidence(action, results)))), 4)


def isotonic_fit(x: np.ndarray, y: np.ndarray) -> tuple[list[float], list[float]]:
    """Pool-adjacent-violators: a non-decreasing step function of x fitted to y (0/1)."""
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], y[order].astype(float)
    blocks: list[list[float]] = []  # [sum_y, count, x_min, x_max]
    for xi, yi in zip(xs, ys, strict=False):
        blocks.append([yi, 1.0, xi, xi])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] >= blocks[-1][0] / blocks[-1][1]:
            s, c, lo, hi = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += c
            blocks[-1][3] = hi
    px, py = [], []
    for s, c, lo, hi in blocks:
        # Laplace-smoothed so a small pure block never claims certainty.
        p = (s + 1) / (c + 2)
        px.extend([float(lo), float(hi)])
        py.extend([p, p])
    return px, py


def ece(conf, correct, bins: int = 10) -> float:
    conf, correct = np.asarray(conf, float), np.asarray(correct, float)
    edges = np.linspace(0, 1, bins + 1)
    total = 0.0
    for lo, hi in zip(edges[:-1], edges[1:], strict=False):
        m = (conf > lo) & (conf <= hi) if lo > 0 else (conf >= lo) & (conf <= hi)
        if m.any():
            total += m.mean() * abs(correct[m].mean() - conf[m].mean())
    return float(total)


def reliability(conf, correct, bins: int = 10) -> list[dict]:
    conf, correct = np.asarray(conf, float), np.asarray(correct, float)
    edges = np.linspace(0, 1, bins + 1)
    rows = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=False):
        m = (conf > lo) & (conf <= hi) if lo > 0 else (conf >= lo) & (conf <= hi)
        if m.any():
            rows.append({"bin": f"{lo:.1f}-{hi:.1f}", "n": int(m.sum()), "confidence": float(conf[m].mean()), "accuracy": float(correct[m].mean())})
    return rows
