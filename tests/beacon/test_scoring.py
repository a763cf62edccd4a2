"""Scores per category over the counted checks, the overall mean, and suggestions by impact."""

from beacon.constants import CHECKS
from beacon.scoring import score, suggestions


def _checks(**statuses) -> list[dict]:
    out = []
    for spec in CHECKS:
        status = statuses.get(spec.id, "pass")
        out.append({"id": spec.id, "category": spec.category, "weight": spec.weight, "title": spec.title, "status": status,
                    "fix": {"text": f"fix {spec.id}", "snippet": ""} if status != "pass" else None})
    return out


def test_all_passing_scores_100_everywhere():
    assert score(_checks()) == {"overall": 100, "find": 100, "read": 100, "use": 100}


def test_a_category_is_the_weighted_share_of_points_over_counted_checks():
    # find weights: robots 3, sitemap 2, llms 2, registry 1. robots fail, llms partial, registry n/a: (0 + 2 + 1) / 7.
    got = score(_checks(robots_ai_access="fail", llms_txt="partial", mcp_registry="not_applicable"))
    assert got["find"] == round(100 * 3 / 7)
    assert got["overall"] == round((got["find"] + 100 + 100) / 3)


def test_errors_and_not_applicable_count_for_nothing_and_an_empty_category_is_null():
    got = score(_checks(**{spec.id: "error" for spec in CHECKS if spec.category == "use"}))
    assert got["use"] is None
    assert got["overall"] == 100


def test_suggestions_come_by_impact_then_category_then_check_order():
    found = suggestions(_checks(robots_ai_access="partial", mcp_endpoint="fail", structured_data="fail", sitemap="fail",
                                says_what_it_does="fail", mcp_registry="not_applicable", openapi="error"))
    assert [(s["check"], s["impact"]) for s in found] == [
        ("says_what_it_does", 3), ("mcp_endpoint", 3), ("sitemap", 2), ("robots_ai_access", 1.5), ("structured_data", 1)]
