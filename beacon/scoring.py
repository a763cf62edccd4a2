"""Scores and suggestions from the verdicts.

Each check has a weight (1 to 3, constants.CHECKS). Points: pass 1, partial 0.5, fail 0; checks that
are `not_applicable` or `error` count for nothing either way. A category's score is
100 × Σ(weight × points) / Σ(weight) over its counted checks, rounded, or null when none counts; the
overall score is the mean of the category scores that exist, so each of find, read and use weighs
the same. Suggestions are the fixes of failed and partial checks, ordered by impact
(weight × points lost), then by category order and check order.
"""

from .constants import CATEGORIES, CHECKS_BY_ID, POINTS


def score(checks: list[dict]) -> dict:
    scores: dict[str, int | None] = {}
    for category in CATEGORIES:
        counted = [c for c in checks if c["category"] == category and c["status"] in POINTS]
        weight = sum(c["weight"] for c in counted)
        scores[category] = round(100 * sum(c["weight"] * POINTS[c["status"]] for c in counted) / weight) if weight else None
    present = [s for s in scores.values() if s is not None]
    scores["overall"] = round(sum(present) / len(present)) if present else None
    return {"overall": scores["overall"], **{c: scores[c] for c in CATEGORIES}}


def suggestions(checks: list[dict]) -> list[dict]:
    order = {spec_id: index for index, spec_id in enumerate(CHECKS_BY_ID)}
    found = []
    for check in checks:
        if check["status"] not in POINTS or check["status"] == "pass" or not check.get("fix"):
            continue
        impact = check["weight"] * (1 - POINTS[check["status"]])
        found.append({"check": check["id"], "category": check["category"], "impact": impact, "title": check["title"],
                      "text": check["fix"]["text"], "snippet": check["fix"].get("snippet", "")})
    found.sort(key=lambda s: (-s["impact"], CATEGORIES.index(s["category"]), order[s["check"]]))
    return found
