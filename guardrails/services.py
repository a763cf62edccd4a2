"""Guardrails operations: evaluate (one and batch), evaluations, rule sets, feedback.

`evaluation_create` is the one entry point every surface calls (REST, x402, MCP, A2A)."""

import json
import logging
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, transaction

from accounts.models import Organization
from accounts.services import audit_record
from accounts.webhooks import webhook_emit
from billing import constants as billing_constants
from core import clock
from core.errors import BadGateway, BadRequest, Conflict, Forbidden, NotFound
from core.ids import new_id
from core.pagination import page_newest_first
from guardrails.engine import rules as engine
from guardrails.models import Evaluation, Feedback, RuleSet

log = logging.getLogger(__name__)

BATCH_MAX_ITEMS = 50
METADATA_MAX_BYTES = 8_192
CONTEXT_MAX_BYTES = 2_048


@dataclass(frozen=True)
class ResolvedRuleSet:
    slug: str
    rules: list[dict]
    system: bool
    outbound: bool


# ---------------------------------------------------------------- rule sets


def _system_view(slug: str) -> dict:
    spec = engine.SYSTEM_RULE_SETS[slug]
    return {
        "id": f"system:{slug}", "slug": slug, "name": spec["name"], "description": spec["description"],
        "system": True, "is_active": True, "rules": spec["rules"], "created_at": None, "updated_at": None,
    }


def _custom_view(rule_set: RuleSet) -> dict:
    return {
        "id": rule_set.id, "slug": rule_set.slug, "name": rule_set.name, "description": rule_set.description,
        "system": False, "is_active": rule_set.is_active, "rules": rule_set.rules,
        "created_at": rule_set.created_at, "updated_at": rule_set.updated_at,
    }


def rule_set_list(*, org: Organization, include_inactive: bool = False) -> list[dict]:
    custom = RuleSet.objects.filter(org=org)
    if not include_inactive:
        custom = custom.filter(is_active=True)
    return [_system_view(slug) for slug in engine.SYSTEM_RULE_SETS] + [_custom_view(r) for r in custom.order_by("slug")]


def _custom_get(org: Organization, slug: str) -> RuleSet:
    rule_set = RuleSet.objects.filter(org=org, slug=slug).first()
    if rule_set is None:
        raise NotFound("No rule set with this slug in this organization.")
    return rule_set


def rule_set_get(*, org: Organization | None, slug: str) -> dict:
    if slug in engine.SYSTEM_RULE_SETS:
        return _system_view(slug)
    if org is None:
        raise NotFound(f"No prebuilt rule set '{slug}'.")
    return _custom_view(_custom_get(org, slug))


def _rules_checked(rules) -> list[dict]:
    try:
        return engine.rules_validate(rules)
    except engine.RuleError as exc:
        raise BadRequest(str(exc)) from None


def rule_set_create(*, org: Organization, slug: str, rules: list, name: str = "", description: str = "",
                    actor: str = "", ip: str = "") -> dict:
    if slug in engine.SYSTEM_RULE_SETS:
        raise Conflict(f"slug '{slug}' is taken by a system rule set.")
    checked = _rules_checked(rules)
    now = clock.now()
    try:
        with transaction.atomic():
            rule_set = RuleSet.objects.create(org=org, slug=slug, name=name, description=description, rules=checked,
                                              created_at=now, updated_at=now)
    except IntegrityError:
        raise Conflict(f"slug '{slug}' is taken by another rule set of this organization.") from None
    audit_record(org=org, action="guardrails.rule_set.created", actor=actor, target=rule_set.slug,
                 data={"id": rule_set.id, "rules": len(checked)}, ip=ip)
    return _custom_view(rule_set)


def rule_set_update(*, org: Organization, slug: str, actor: str = "", ip: str = "", **changes) -> dict:
    if slug in engine.SYSTEM_RULE_SETS:
        raise Forbidden(f"'{slug}' is a system rule set and is read-only; create your own with POST /api/v1/rule-sets.")
    rule_set = _custom_get(org, slug)
    changed = []
    if "rules" in changes:
        rule_set.rules = _rules_checked(changes["rules"])
        changed.append("rules")
    for field in ("name", "description", "is_active"):
        if field in changes:
            setattr(rule_set, field, changes[field])
            changed.append(field)
    rule_set.updated_at = clock.now()
    rule_set.save()
    audit_record(org=org, action="guardrails.rule_set.updated", actor=actor, target=rule_set.slug,
                 data={"id": rule_set.id, "fields": changed}, ip=ip)
    return _custom_view(rule_set)


def rule_set_deactivate(*, org: Organization, slug: str, actor: str = "", ip: str = "") -> dict:
    if slug in engine.SYSTEM_RULE_SETS:
        raise Forbidden(f"'{slug}' is a system rule set and cannot be deleted.")
    rule_set = _custom_get(org, slug)
    if rule_set.is_active:
        rule_set.is_active = False
        rule_set.updated_at = clock.now()
        rule_set.save(update_fields=["is_active", "updated_at"])
        audit_record(org=org, action="guardrails.rule_set.deactivated", actor=actor, target=rule_set.slug,
                     data={"id": rule_set.id}, ip=ip)
    return {"id": rule_set.id, "slug": rule_set.slug, "is_active": rule_set.is_active}


def rule_set_resolve(*, org: Organization | None, slug: str | None) -> ResolvedRuleSet:
    """The rules behind a slug: system sets for everyone, active custom sets for their organization only."""
    slug = slug or engine.DEFAULT_RULE_SET
    if slug in engine.SYSTEM_RULE_SETS:
        spec = engine.SYSTEM_RULE_SETS[slug]
        return ResolvedRuleSet(slug, spec["rules"], True, bool(spec.get("outbound")))
    if org is None:
        raise NotFound(f"rule_set: no prebuilt rule set '{slug}'; keyless callers may use {', '.join(engine.SYSTEM_RULE_SETS)}.")
    rule_set = RuleSet.objects.filter(org=org, slug=slug, is_active=True).first()
    if rule_set is None:
        raise NotFound(f"rule_set: no active rule set '{slug}' in this organization.")
    return ResolvedRuleSet(slug, rule_set.rules, False, False)


# ---------------------------------------------------------------- evaluate


def _json_size(value) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str).encode())


def input_check(*, text: str, keyless: bool, field: str = "input") -> None:
    limit = billing_constants.KEYLESS_MAX_INPUT_CHARS if keyless else settings.GUARDRAILS_MAX_INPUT_CHARS
    if len(text) > limit:
        who = "keyless callers" if keyless else "this service"
        raise BadRequest(f"{field} has {len(text)} characters; {who} accept at most {limit}.")
    if not text.strip():
        raise BadRequest(f"{field} must not be empty.")


def context_check(context: dict | None, metadata: dict | None, *, prefix: str = "") -> None:
    if metadata is not None and _json_size(metadata) > METADATA_MAX_BYTES:
        raise BadRequest(f"{prefix}metadata must be at most {METADATA_MAX_BYTES} bytes of JSON.")
    if context is not None and _json_size(context) > CONTEXT_MAX_BYTES:
        raise BadRequest(f"{prefix}context must be at most {CONTEXT_MAX_BYTES} bytes of JSON.")


def _result_body(evaluation_id: str, slug: str, outcome: engine.Outcome, created_at: datetime) -> dict:
    return {
        "id": evaluation_id,
        "rule_set": slug,
        "verdict": outcome.verdict,
        "recommended_action": outcome.recommended_action,
        "confidence": outcome.confidence,
        "language": outcome.language or None,
        "rules": [r.public() for r in outcome.rules],
        "findings": [f.public() for f in outcome.findings()],
        "redacted_text": outcome.redacted_text,
        "signals": outcome.signals,
        "latency_ms": outcome.latency_ms,
        "engine_version": engine.ENGINE_VERSION,
        "created_at": created_at,
    }


def evaluation_run(*, org: Organization | None, input: str, rule_set: ResolvedRuleSet, context: dict | None = None) -> engine.Outcome:
    try:
        return engine.evaluate(input, rule_set.rules, context=context or {}, outbound=rule_set.outbound)
    except Exception:
        log.exception("guardrails engine failed")
        raise BadGateway("The evaluation engine failed on this input; it has been logged. Retry, or report it with POST /api/v1/feedback.") from None


def evaluation_create(*, org: Organization | None, input: str, rule_set: str | None = None, metadata: dict | None = None,
                      context: dict | None = None, batch_item_id: str = "", resolved: ResolvedRuleSet | None = None) -> dict:
    """Check `input` against a rule set; store the record for an organization; emit webhooks. Returns the body."""
    keyless = org is None
    input_check(text=input, keyless=keyless)
    context_check(context, metadata)
    resolved = resolved or rule_set_resolve(org=org, slug=rule_set)
    outcome = evaluation_run(org=org, input=input, rule_set=resolved, context=context)
    created_at = clock.now()
    evaluation_id = new_id("eval_")
    body = _result_body(evaluation_id, resolved.slug, outcome, created_at)
    if org is not None:
        store = org.store_inputs
        Evaluation.objects.create(
            id=evaluation_id, org=org, rule_set=resolved.slug, verdict=outcome.verdict,
            recommended_action=outcome.recommended_action, confidence=outcome.confidence,
            language=outcome.language[:8], rules=body["rules"], input=input if store else "", input_stored=store,
            input_chars=len(input), context=context if store else None, metadata=metadata,
            latency_ms=outcome.latency_ms, batch_item_id=batch_item_id, created_at=created_at,
        )
        _emit(org, body, metadata)
    return body


def _emit(org: Organization, body: dict, metadata: dict | None) -> None:
    event = {"fail": "evaluation.failed", "review": "evaluation.review"}.get(body["verdict"])
    if event is None:
        return
    data = {
        "id": body["id"], "rule_set": body["rule_set"], "verdict": body["verdict"],
        "recommended_action": body["recommended_action"], "confidence": body["confidence"],
        "rules": [r["id"] for r in body["rules"] if r["verdict"] != "pass"], "metadata": metadata,
    }
    try:
        webhook_emit(org=org, type=event, data=data)
    except Exception:  # a webhook problem never fails the evaluation itself
        log.exception("guardrails webhook emit failed")


def evaluation_batch(*, org: Organization, rule_set: str | None, items: list[dict]) -> tuple[list[dict], int]:
    """Each item succeeds or fails on its own. Returns (results in order, number of failed items)."""
    resolved = rule_set_resolve(org=org, slug=rule_set)
    results, failed = [], 0
    for item in items:
        try:
            body = evaluation_create(org=org, input=item["input"], metadata=item.get("metadata"), resolved=resolved,
                                     batch_item_id=item["id"], context=item.get("context"))
            results.append({"id": item["id"], "result": body, "error": None})
        except (BadRequest, BadGateway) as exc:
            failed += 1
            results.append({"id": item["id"], "result": None, "error": exc.message})
    return results, failed


# ---------------------------------------------------------------- evaluation records


def evaluation_list(*, org: Organization, limit: int, cursor: str | None = None, verdict: str | None = None,
                    rule_set: str | None = None) -> tuple[list[Evaluation], str | None]:
    rows = Evaluation.objects.filter(org=org).defer("input", "context")
    if verdict:
        rows = rows.filter(verdict=verdict)
    if rule_set:
        rows = rows.filter(rule_set=rule_set)
    return page_newest_first(rows, limit=limit, cursor=cursor)


def evaluation_get(*, org: Organization, evaluation_id: str) -> Evaluation:
    evaluation = Evaluation.objects.filter(org=org, pk=evaluation_id).first()
    if evaluation is None:
        raise NotFound("No evaluation with this id in this organization.")
    return evaluation


def evaluation_delete(*, org: Organization, evaluation_id: str) -> dict:
    evaluation = evaluation_get(org=org, evaluation_id=evaluation_id)
    evaluation.delete()
    return {"id": evaluation_id, "deleted": True}


def evaluation_delete_many(*, org: Organization, before: datetime | None = None) -> dict:
    rows = Evaluation.objects.filter(org=org)
    if before is not None:
        rows = rows.filter(created_at__lt=before)
    deleted, _ = rows.delete()
    return {"deleted": deleted, "before": before.isoformat() if before else None}


# ---------------------------------------------------------------- feedback


def feedback_create(*, org: Organization | None, message: str, about: str = "", evaluation_id: str = "",
                    request_id: str = "", contact: str = "", ip: str = "") -> Feedback:
    return Feedback.objects.create(org=org, message=message, about=about, evaluation_id=evaluation_id,
                                   request_id=request_id, contact=contact, ip=ip[:64], created_at=clock.now())
