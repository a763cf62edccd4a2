"""Tower's error shape: the service envelope `{"error": "<one sentence>"}` plus a machine `code`.

Tower's own refusals carry `code` (and `field` for an input that breaks the operation's JSON
Schema); errors of the transport (malformed JSON, a body that is not an object, a missing or
invalid key, a wrong method, a body too large) and 404 (another tenant's object and a missing one
answer alike) are the service-wide `{"error"}` alone. A refusal by
policy is not an error object but the action itself, with `error` and `code` added (422).
"""

from core import errors

CODES = {
    "invalid_request": "The body or query is not what the route takes (400).",
    "unknown_operation": "No operation has this name (400).",
    "input_invalid": "`input` breaks the operation's JSON Schema; `field` points at the value (400).",
    "agent_key_required": "The route takes an agent key, `svc_agent_…` (403).",
    "org_key_required": "The route takes an organization key, `svc_live_…` (403).",
    "out_of_scope": "The agent's scopes do not include the operation (403).",
    "agent_limit": "The organization has the most active agents allowed (409).",
    "not_compensable": "The action was not executed, or its operation cannot be undone (409).",
    "not_pending_review": "The action is not waiting for review (409).",
    "idempotency_in_progress": "An action with this idempotency key is still running (409).",
    "idempotency_mismatch": "The idempotency key was used with a different body (422).",
    "policy_rejected": "Refused by policy; the body is the action (422).",
    "execution_failed": "The legacy system refused the write; the body is the action (422).",
    "decision_quota": "The day's decision quota is used up (429).",
    "monthly_quota": "The month's action quota is used up (429).",
    "already_subscribed": "The organization already has a Tower subscription (409).",
    "no_subscription": "The organization has no active Tower subscription to cancel (409).",
    "payment_processor": "The payment processor (Stripe) failed; try again (502).",
    "billing_disabled": "Billing is not enabled on this service (503).",
}


def _extra(code: str, extra: dict | None) -> dict:
    assert code in CODES, code
    return {"code": code, **(extra or {})}


def bad_request(message: str, code: str = "invalid_request", **extra) -> errors.BadRequest:
    return errors.BadRequest(message, extra=_extra(code, extra))


def forbidden(message: str, code: str) -> errors.Forbidden:
    return errors.Forbidden(message, extra=_extra(code, None))


def not_found(message: str) -> errors.NotFound:
    # Bare envelope: another tenant's object and a missing one must answer exactly alike.
    return errors.NotFound(message)


def conflict(message: str, code: str) -> errors.Conflict:
    return errors.Conflict(message, extra=_extra(code, None))


def too_many(message: str, code: str, retry_after: int) -> errors.TooManyRequests:
    return errors.TooManyRequests(message, retry_after=retry_after, extra=_extra(code, None))


def bad_gateway(message: str, code: str = "payment_processor") -> errors.BadGateway:
    return errors.BadGateway(message, extra=_extra(code, None))


def unavailable(message: str) -> errors.ServiceUnavailable:
    return errors.ServiceUnavailable(message, extra=_extra("billing_disabled", None))
