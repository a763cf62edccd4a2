"""Tower's operations: one function each, called alike by the REST views, the admin and MCP.

Action states and their moves (also in the schema, see tower/states.py):

    (request) --auto--------------> executed        (200)   --compensate--> compensated
    (request) --auto, ERP refuses-> failed          (422)
    (request) --review------------> pending_review  (202)   --approve--> executed | failed
                                                            --decline--> declined
    (request) --reject------------> rejected        (422)
    dry_run: decided and validated, nothing stored, no receipt (200, state "dry_run")
"""

import hashlib
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F

from accounts.keys import key_generate
from accounts.services import audit_record
from accounts.webhooks import webhook_emit
from billing import services as billing
from core import clock, idempotency, signing
from core import errors as core_errors
from core.ids import new_id
from tower import constants, errors
from tower.adapters import AdapterError, adapter_for
from tower.models import Action, Agent, QuotaCounter, Receipt, TemplateInstall
from tower.operations import CATALOG, Operation, input_errors
from tower.policy import Decision, policy_evaluate
from tower.receipts import chain_head_ensure, chain_verify, receipt_get, receipts_append

ORG_ACTOR = "organization key"


def _iso(at: datetime | None) -> str | None:
    return at.isoformat().replace("+00:00", "Z") if at else None


def _digest(value) -> str:
    return hashlib.sha256(signing.canonical_json(value)).hexdigest()


# Agents.


@dataclass(frozen=True)
class IssuedAgent:
    agent: Agent
    raw: str


def agent_record(agent: Agent) -> dict:
    return {"id": str(agent.id), "name": agent.name, "scopes": list(agent.scopes), "prefix": agent.prefix,
            "is_active": agent.is_active, "created_at": _iso(agent.created_at), "last_used_at": _iso(agent.last_used_at),
            "revoked_at": _iso(agent.revoked_at)}


def agent_create(*, org, name: str, scopes: list[str], actor: str = "", ip: str = "") -> IssuedAgent:
    """A new agent with its key (returned once), within the organization's limit of active agents."""
    from accounts.models import Organization

    scopes = list(dict.fromkeys(scopes))
    with transaction.atomic():
        Organization.objects.select_for_update().filter(pk=org.pk).first()  # two creations cannot both pass the limit
        active = Agent.objects.filter(org=org, is_active=True).count()
        if active >= constants.agents_max_active():
            raise errors.conflict(f"This organization already has {active} active agents, the most allowed; revoke one first.",
                                  "agent_limit")
        raw, prefix, digest = key_generate(prefix=constants.AGENT_KEY_PREFIX)
        agent = Agent.objects.create(org=org, name=name, scopes=scopes, prefix=prefix, key_hash=digest)
        audit_record(org=org, action="tower.agent.created", actor=actor, target=str(agent.id),
                     data={"name": name, "scopes": scopes, "prefix": prefix}, ip=ip)
    return IssuedAgent(agent, raw)


def agent_list(*, org) -> list[Agent]:
    return list(Agent.objects.filter(org=org).order_by("-created_at"))


def agent_revoke(*, org, agent_id, actor: str = "", ip: str = "") -> Agent:
    """Revoke an agent: its key fails from the next request. Revoking twice is harmless."""
    agent = Agent.objects.filter(org=org, pk=agent_id).first()
    if agent is None:
        raise errors.not_found("No agent with this id in your organization.")
    if agent.is_active:
        Agent.objects.filter(pk=agent.pk).update(is_active=False, revoked_at=clock.now())
        agent.refresh_from_db()
        audit_record(org=org, action="tower.agent.revoked", actor=actor, target=str(agent.id), data={"prefix": agent.prefix}, ip=ip)
    return agent


def capabilities_list(*, agent: Agent | None) -> list[dict]:
    """The operations this agent may call (every operation for the organization key), with their input schemas."""
    return [op.describe() for op in CATALOG.values() if agent is None or agent.allows(op.name)]


# Checks shared by decide and actions: the operation exists, the agent may call it, the input fits.


def operation_resolve(*, name: str, agent: Agent | None, data) -> Operation:
    operation = CATALOG.get(name)
    if operation is None:
        raise errors.bad_request(f"operation: there is no operation named {name[:64]!r}; GET capabilities lists them.",
                                 "unknown_operation", field="operation")
    if agent is not None and not agent.allows(name):
        raise errors.forbidden(f"This agent's scopes do not include the operation {name}.", "out_of_scope")
    problems = input_errors(operation, data)
    if problems:
        field, message = problems[0]
        raise errors.bad_request(f"{field}: {message}", "input_invalid", field=field)
    return operation


def _decision_of(*, org, operation: Operation, data: dict) -> Decision:
    facts = operation.facts(adapter_for(org), data)
    return policy_evaluate(org=org, operation=operation, facts=facts)


# Quotas: one row per organization, kind and period, taken with a conditional UPDATE.


def _period(kind: str) -> str:
    now = clock.now()
    return now.strftime("%Y-%m-%d") if kind == "decisions" else now.strftime("%Y-%m")


def _limit(kind: str) -> int:
    return constants.decisions_per_day() if kind == "decisions" else constants.actions_per_month()


def quota_take(*, org, kind: str) -> None:
    """Take one unit of `decisions` (per UTC day) or `actions` (per UTC month), or raise 429."""
    period, limit = _period(kind), _limit(kind)
    for _ in range(3):
        rows = QuotaCounter.objects.filter(org=org, kind=kind, period=period)
        if rows.filter(used__lt=limit).update(used=F("used") + 1):
            return
        if rows.exists():
            # The row may have been created by a concurrent first use just after our UPDATE: try once more.
            if rows.filter(used__lt=limit).update(used=F("used") + 1):
                return
            break
        try:
            with transaction.atomic():
                QuotaCounter.objects.create(org=org, kind=kind, period=period, used=0)
        except IntegrityError:
            pass
    now = clock.now()
    if kind == "decisions":
        raise errors.too_many(f"The decision quota of {limit} a day is used up; it resets at UTC midnight.", "decision_quota",
                              retry_after=int((clock.next_utc_midnight(now) - now).total_seconds()))
    raise errors.too_many(f"The monthly quota of {limit} actions is used up; it resets on the 1st (UTC).", "monthly_quota",
                          retry_after=3600)


def quota_release(*, org, kind: str) -> None:
    QuotaCounter.objects.filter(org=org, kind=kind, period=_period(kind), used__gt=0).update(used=F("used") - 1)


def quota_usage(*, org) -> dict:
    used = {row.kind: row.used for row in QuotaCounter.objects.filter(org=org).filter(
        kind__in=["decisions", "actions"]) if row.period == _period(row.kind)}
    return {
        "actions": {"period": _period("actions"), "used": used.get("actions", 0), "limit": constants.actions_per_month()},
        "decisions": {"period": _period("decisions"), "used": used.get("decisions", 0), "limit": constants.decisions_per_day()},
    }


# Decide.


def decide(*, org, agent: Agent | None, operation: str, input: dict) -> dict:
    """The policy's decision for an operation and input: no side effect but one unit of the decision quota."""
    op = operation_resolve(name=operation, agent=agent, data=input)
    quota_take(org=org, kind="decisions")
    decision = _decision_of(org=org, operation=op, data=input)
    return {"operation": op.name, "kind": op.kind, "decision": decision.decision, "reasons": decision.reasons,
            "facts": decision.facts, "compensable": op.compensate is not None}


# Actions.

STATUS_OF_STATE = {Action.EXECUTED: 200, Action.PENDING_REVIEW: 202, Action.REJECTED: 422, Action.FAILED: 422,
                   Action.DECLINED: 200, Action.COMPENSATED: 200}


@dataclass(frozen=True)
class ActionOutcome:
    status: int
    body: dict
    replayed: bool = False
    action: Action | None = None


def action_record(action: Action, receipts: list[Receipt] | None = None) -> dict:
    if receipts is None:
        receipts = list(action.receipts.order_by("sequence"))
    operation = CATALOG.get(action.operation)
    body = {
        "id": action.id,
        "agent_id": str(action.agent_id) if action.agent_id else None,
        "operation": action.operation,
        "input": action.input,
        "dry_run": False,
        "idempotency_key": action.idempotency_key or None,
        "decision": action.decision,
        "reasons": action.reasons,
        "facts": action.facts,
        "state": action.state,
        "result": action.result,
        "compensable": action.state == Action.EXECUTED and operation is not None and operation.compensate is not None,
        "compensation": action.compensation,
        "review": ({"reviewer": action.reviewer, "note": action.review_note, "reviewed_at": _iso(action.reviewed_at)}
                   if action.reviewed_at else None),
        "receipts": [{"id": r.id, "sequence": r.sequence, "kind": r.kind} for r in receipts],
        "created_at": _iso(action.created_at),
        "updated_at": _iso(action.updated_at),
    }
    if action.state in (Action.REJECTED, Action.FAILED):
        code = "policy_rejected" if action.state == Action.REJECTED else "execution_failed"
        message = action.error or "; ".join(r["message"] for r in action.reasons) or "Refused."
        body = {"error": message, "code": code, **body}
    return body


def _receipt_entry(action: Action, kind: str, **extra) -> dict:
    return {"kind": kind, "action": action, "action_id": action.id,
            "agent_id": str(action.agent_id) if action.agent_id else None, "operation": action.operation,
            "input_digest": action.input_digest, **extra}


def _execute(*, org, action: Action, operation: Operation) -> dict:
    """Run the operation on the legacy system inside a savepoint; the receipt entry for what happened."""
    try:
        with transaction.atomic():
            result = operation.run(adapter_for(org), action.input, action.id)
    except AdapterError as exc:
        action.state, action.error = Action.FAILED, str(exc)[:300]
        return _receipt_entry(action, "failed", state=action.state, error=action.error)
    action.state, action.result = Action.EXECUTED, result
    return _receipt_entry(action, "executed", state=action.state, result_digest=_digest(result))


def _events(org, action: Action) -> None:
    data = {"action_id": action.id, "operation": action.operation, "state": action.state, "decision": action.decision}
    if action.state == Action.EXECUTED:
        webhook_emit(org=org, type="tower.action.executed", data=data)
    elif action.state == Action.PENDING_REVIEW:
        webhook_emit(org=org, type="tower.action.pending_review", data=data)
    elif action.state in (Action.REJECTED, Action.DECLINED):
        webhook_emit(org=org, type="tower.action.rejected", data=data)


def action_create(*, org, agent: Agent, operation: str, input: dict, idempotency_key: str, dry_run: bool = False) -> ActionOutcome:
    """Decide and, by the decision, execute (200), hold for review (202) or refuse (422) one action.

    Idempotent per agent on `idempotency_key`: the same key and body give the stored outcome, a
    different body 422, a request still running 409. A dry run decides and validates only.
    """
    op = operation_resolve(name=operation, agent=agent, data=input)
    idempotency.idempotency_key_check(idempotency_key, name="idempotency_key")
    if dry_run:
        quota_take(org=org, kind="decisions")
        decision = _decision_of(org=org, operation=op, data=input)
        now = _iso(clock.now())
        return ActionOutcome(200, {
            "id": None, "agent_id": str(agent.id), "operation": op.name, "input": input, "dry_run": True,
            "idempotency_key": idempotency_key, "decision": decision.decision, "reasons": decision.reasons,
            "facts": decision.facts, "state": "dry_run", "result": None, "compensable": False, "compensation": None,
            "review": None, "receipts": [], "created_at": now, "updated_at": now})
    fingerprint = idempotency.request_fingerprint("tower.action", op.name, input)
    try:
        lease = idempotency.idempotency_begin(scope=f"tower-agent:{agent.id}", key=idempotency_key, fingerprint=fingerprint)
    except core_errors.Unprocessable as exc:
        raise core_errors.Unprocessable(exc.message, extra={"code": "idempotency_mismatch"}) from None
    except core_errors.Conflict as exc:
        raise errors.conflict(exc.message, "idempotency_in_progress") from None
    if isinstance(lease, idempotency.Replay):
        return ActionOutcome(lease.status_code, lease.body, replayed=True)
    try:
        quota_take(org=org, kind="actions")
        try:
            outcome = _action_run(org=org, agent=agent, operation=op, data=input, idempotency_key=idempotency_key)
        except BaseException:
            quota_release(org=org, kind="actions")
            raise
    except BaseException:
        idempotency.idempotency_release(lease)
        raise
    idempotency.idempotency_finish(lease, status_code=outcome.status, body=outcome.body)
    return outcome


def _action_run(*, org, agent: Agent, operation: Operation, data: dict, idempotency_key: str) -> ActionOutcome:
    decision = _decision_of(org=org, operation=operation, data=data)
    chain_head_ensure(org)
    with transaction.atomic():
        action = Action(id=new_id("act_"), org=org, agent=agent, agent_name=agent.name, operation=operation.name,
                        input=data, input_digest=_digest(data), idempotency_key=idempotency_key,
                        decision=decision.decision, reasons=decision.reasons, facts=decision.facts, created_at=clock.now())
        entries = [_receipt_entry(action, "decision", decision=decision.decision,
                                  reasons=[r["rule"] for r in decision.reasons])]
        if decision.decision == "reject":
            action.state = Action.REJECTED
            action.error = "Refused by policy: " + " ".join(r["message"] for r in decision.reasons)
            action.error = action.error[:300]
            entries.append(_receipt_entry(action, "rejected", state=action.state))
        elif decision.decision == "review":
            action.state = Action.PENDING_REVIEW
        else:
            entries.append(_execute(org=org, action=action, operation=operation))
        action.save(force_insert=True)
        receipts = receipts_append(org=org, entries=entries)
        _events(org, action)
    return ActionOutcome(STATUS_OF_STATE[action.state], action_record(action, receipts), action=action)


def _action_for(*, org, agent: Agent | None, action_id: str, lock: bool = False) -> Action:
    rows = Action.objects.filter(org=org, pk=action_id)
    if agent is not None:
        rows = rows.filter(agent=agent)  # an agent sees the actions it asked for
    if lock:
        rows = rows.select_for_update()
    action = rows.first()
    if action is None:
        raise errors.not_found("No action with this id in your organization.")
    return action


def action_get(*, org, agent: Agent | None, action_id: str) -> Action:
    return _action_for(org=org, agent=agent, action_id=action_id)


def action_compensate(*, org, agent: Agent | None, action_id: str, actor: str = "", ip: str = "") -> Action:
    """Undo an executed write by its compensation (200); again: the same answer. Not compensable: 409."""
    action = _action_for(org=org, agent=agent, action_id=action_id)
    if action.state == Action.COMPENSATED:
        return action
    operation = CATALOG.get(action.operation)
    if action.state != Action.EXECUTED or operation is None or operation.compensate is None:
        why = "its operation cannot be undone" if action.state == Action.EXECUTED else f"it is {action.state}, not executed"
        raise errors.conflict(f"This action cannot be compensated: {why}.", "not_compensable")
    chain_head_ensure(org)
    with transaction.atomic():
        action = _action_for(org=org, agent=agent, action_id=action_id, lock=True)
        if action.state == Action.COMPENSATED:
            return action
        try:
            with transaction.atomic():
                result = operation.compensate(adapter_for(org), action.input, action.result, f"compensate:{action.id}")
        except AdapterError as exc:
            raise errors.conflict(f"This action cannot be compensated now: {exc}", "not_compensable") from None
        action.state, action.compensation, action.compensated_at = Action.COMPENSATED, result, clock.now()
        action.save(update_fields=["state", "compensation", "compensated_at", "updated_at"])
        receipts_append(org=org, entries=[_receipt_entry(action, "compensated", state=action.state,
                                                         result_digest=_digest(result))])
        audit_record(org=org, action="tower.action.compensated", actor=actor, target=action.id,
                     data={"operation": action.operation}, ip=ip)
    return action


def action_review(*, action_id: str, approve: bool, reviewer: str, note: str = "") -> Action:
    """A person's review of a held action: approve executes it, decline refuses it. Receipt, audit, webhook."""
    action = Action.objects.select_related("org").filter(pk=action_id).first()
    if action is None:
        raise errors.not_found("No action with this id.")
    org = action.org
    chain_head_ensure(org)
    with transaction.atomic():
        action = Action.objects.select_for_update().get(pk=action_id)
        if action.state != Action.PENDING_REVIEW:
            raise errors.conflict(f"This action is {action.state}, not waiting for review.", "not_pending_review")
        action.reviewer, action.review_note, action.reviewed_at = reviewer[:150], note[:500], clock.now()
        entries = [_receipt_entry(action, "reviewed", outcome="approved" if approve else "declined", reviewer=action.reviewer)]
        if approve:
            entries.append(_execute(org=org, action=action, operation=CATALOG[action.operation]))
        else:
            action.state = Action.DECLINED
            action.error = f"Declined by {action.reviewer}." + (f" {note}" if note else "")
            action.error = action.error[:300]
        action.save()
        receipts_append(org=org, entries=entries)
        audit_record(org=org, action="tower.action.approved" if approve else "tower.action.declined", actor=action.reviewer,
                     target=action.id, data={"operation": action.operation, "state": action.state})
        _events(org, action)
    return action


# Receipts.


def receipt_find(*, org, ref: str) -> Receipt:
    receipt = receipt_get(org=org, ref=ref)
    if receipt is None:
        raise errors.not_found("No receipt with this id or sequence number in your organization's chain.")
    return receipt


def receipts_verify(*, org, start: int = 1, end: int | None = None) -> dict:
    return chain_verify(org=org, start=start, end=end)


def receipts_export(*, org, start: int = 1, end: int | None = None) -> list[Receipt]:
    rows = Receipt.objects.filter(org=org, sequence__gte=start)
    if end is not None:
        rows = rows.filter(sequence__lte=end)
    return list(rows.order_by("sequence")[:10_000])


# Subscription (bought by card through billing; Tower answers billing's errors in its own shape).


def _billing_call(fn, **kwargs) -> dict:
    """Call billing, and turn its core errors (409, 502, 503) into Tower's `{error, code}`."""
    if not settings.BILLING_ENABLED:
        raise errors.unavailable("Billing is not enabled on this service, so Tower cannot be bought yet.")
    try:
        return fn(**kwargs)
    except core_errors.Conflict as exc:
        code = "no_subscription" if fn is billing.subscription_cancel else "already_subscribed"
        raise errors.conflict(exc.message, code) from exc
    except core_errors.BadGateway as exc:
        raise errors.bad_gateway(exc.message) from exc
    except core_errors.ServiceUnavailable as exc:
        raise errors.unavailable(exc.message) from exc


def _subscription_out(row) -> dict | None:
    if row is None:
        return None
    ends = row.cancels_at or row.current_period_end
    return {"status": row.status, "cancel_at_period_end": row.cancel_at_period_end,
            "current_period_end": row.current_period_end.isoformat() if row.current_period_end else None,
            "cancels_at": ends.isoformat() if row.cancel_at_period_end and ends else None}


def subscription_get(*, org) -> dict:
    live = billing.subscription_current(org=org, product="tower")
    return {
        "status": live.status if live else "pilot",
        "plan": "tower" if live else "tower-pilot",
        "quota": {"actions_per_month": constants.actions_per_month(), "decisions_per_day": constants.decisions_per_day(),
                  "active_agents": constants.agents_max_active()},
        "usage": quota_usage(org=org),
        "pricing": {"currency": "usd", "monthly": constants.PRICE_MONTHLY_USD,
                    "note": "Pilot: free while Tower runs against the mock adapter."},
        "subscription": _subscription_out(live),
        "billing_enabled": bool(settings.BILLING_ENABLED),
    }


def subscription_checkout(*, org) -> dict:
    """A Stripe Checkout page for the Tower subscription; 409 when already subscribed."""
    result = _billing_call(billing.checkout_create, org=org, product="tower", plan="tower")
    return {key: result[key] for key in ("url", "plan", "expires_in_seconds")}


def subscription_cancel(*, org) -> dict:
    """Schedule the Tower subscription to end with its period; 409 without an active one."""
    return _billing_call(billing.subscription_cancel, org=org, product="tower")


# The starter workflow.


def template_load(*, org, actor: str = "", ip: str = "") -> tuple[dict, bool]:
    """Load "email purchase order to order entry" once: (what it holds, whether it was created now)."""
    from tower.template import SLUG, template_install, template_summary

    if TemplateInstall.objects.filter(org=org, slug=SLUG).exists():
        return template_summary(org), False
    try:
        with transaction.atomic():
            TemplateInstall.objects.create(org=org, slug=SLUG)
            template_install(org)
            audit_record(org=org, action="tower.template.loaded", actor=actor, target=SLUG, ip=ip)
    except IntegrityError:
        return template_summary(org), False
    return template_summary(org), True
