"""Running the engine over a corpus split: the shared core of the calibration and languages commands
and of bench/guardrails.py. Uses the default rule set, as a caller who names none."""

from collections import defaultdict

import numpy as np

from guardrails import splits
from guardrails.engine import calibration
from guardrails.engine import rules as engine


def acceptable(row: dict) -> set[str]:
    return set(row.get("acceptable") or [row["action"]])


def run(rows: list[dict], *, rule_set: str = "default") -> list[tuple[dict, engine.Outcome]]:
    spec = engine.SYSTEM_RULE_SETS[rule_set]["rules"]
    return [(row, engine.evaluate(row["text"], spec)) for row in rows]


def fit(results) -> dict:
    """Isotonic maps from each action's raw confidence to P(action correct)."""
    by_action = defaultdict(lambda: ([], []))
    for row, outcome in results:
        raw = calibration.raw_confidence(outcome.recommended_action, outcome.rules)
        xs, ys = by_action[outcome.recommended_action]
        xs.append(raw)
        ys.append(1.0 if outcome.recommended_action in acceptable(row) else 0.0)
    actions = {}
    for action, (xs, ys) in by_action.items():
        px, py = calibration.isotonic_fit(np.array(xs), np.array(ys))
        actions[action] = {"x": px, "y": py, "n": len(xs)}
    return {"actions": actions}


def calibration_metrics(results) -> dict:
    conf = np.array([o.confidence for _, o in results])
    correct = np.array([1.0 if o.recommended_action in acceptable(r) else 0.0 for r, o in results])
    return {
        "n": len(results),
        "accuracy": float(correct.mean()) if len(results) else 0.0,
        "ece": calibration.ece(conf, correct),
        "brier": float(((conf - correct) ** 2).mean()) if len(results) else 0.0,
        "reliability": calibration.reliability(conf, correct),
    }


def detector_metrics(results) -> dict:
    """Per detector and language: precision, recall, and false positives on benign look-alikes."""
    out: dict = defaultdict(lambda: defaultdict(lambda: {"tp": 0, "fp": 0, "fn": 0, "neg": 0, "hard_neg": 0, "hard_fp": 0}))
    for row, outcome in results:
        fired = {r.detector: r.verdict == "fail" for r in outcome.rules}
        expected = {
            "prompt_injection": row["expect"]["prompt_injection"],
            "toxicity": row["expect"]["toxic"],
            "pii": bool(row["expect"]["pii"]),
            "secrets": row["expect"]["secret"],
        }
        hard = splits.is_lookalike(row)
        for detector, exp in expected.items():
            for lang in (row["lang"], "all"):
                cell = out[detector][lang]
                got = fired.get(detector, False)
                if exp and got:
                    cell["tp"] += 1
                elif exp:
                    cell["fn"] += 1
                else:
                    cell["neg"] += 1
                    cell["fp"] += int(got)
                    if hard:
                        cell["hard_neg"] += 1
                        cell["hard_fp"] += int(got)
    return out


def rows(split: str) -> list[dict]:
    return splits.rows(split)
