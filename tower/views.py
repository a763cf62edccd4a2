"""Tower routes: thin views over tower.services.

Keys: template, agents, checkout and subscription take the organization key (`svc_live_…`);
POST actions takes an agent key (`svc_agent_…`); capabilities, decide, actions/{id}, compensate and
the receipt reads take either (an agent sees and undoes only its own actions and is held to its
scopes; the organization key sees every agent's). The public key needs none.
"""

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.response import Response

from accounts.auth import ApiKeyAuthentication
from core import idempotency, signing
from core.api import ApiView
from core.net import client_ip
from core.schema import errors as std_errors
from tower import constants, errors, services
from tower.auth import AgentCredential, AgentKeyAuthentication
from tower.receipts import receipt_record
from tower.serializers import (
    TowerActionIn,
    TowerActionOut,
    TowerActionRefusedOut,
    TowerAgentCreatedOut,
    TowerAgentIn,
    TowerAgentListOut,
    TowerAgentOut,
    TowerCancelOut,
    TowerCapabilitiesOut,
    TowerCheckoutOut,
    TowerDecideIn,
    TowerDecisionOut,
    TowerErrorOut,
    TowerPublicKeyOut,
    TowerReceiptExportOut,
    TowerReceiptOut,
    TowerSubscriptionOut,
    TowerTemplateOut,
    TowerVerifyOut,
    TowerVerifyQueryIn,
)

TAGS = ["Tower"]


def tower_errors(*codes: int, **described: str) -> dict:
    """Responses in Tower's error shape (`error`, `code`, `field`); 401 is the service envelope."""
    out = {}
    for code in codes:
        if code == 401:
            out.update(std_errors(401))
        else:
            out[code] = OpenApiResponse(TowerErrorOut, description=described.get(f"s{code}", ""))
    return out


class TowerView(ApiView):
    """Either key: the agent's or the organization's."""

    authentication_classes = [AgentKeyAuthentication, ApiKeyAuthentication]

    def agent_of(self, request):
        return request.auth.agent if isinstance(request.auth, AgentCredential) else None

    def actor(self, request) -> dict:
        return {"actor": request.api_key.prefix if request.api_key else "", "ip": client_ip(request)}


class OrgView(ApiView):
    """The organization key only (an agent key is not a key these routes know: 401)."""

    authentication_classes = [ApiKeyAuthentication]

    def actor(self, request) -> dict:
        return {"actor": request.api_key.prefix if request.api_key else "", "ip": client_ip(request)}


class AgentListView(OrgView):
    """List the organization's agents (never their keys), or create one; its key is returned once."""

    @extend_schema(tags=TAGS, responses={200: TowerAgentListOut, **tower_errors(401, 403)})
    def get(self, request):
        agents = services.agent_list(org=request.org)
        return Response({"agents": [services.agent_record(a) for a in agents], "active_limit": constants.agents_max_active()})

    @extend_schema(tags=TAGS, request=TowerAgentIn, responses={201: TowerAgentCreatedOut, **tower_errors(
        400, 401, 403, 409, s409="`agent_limit`: the organization has the most active agents allowed; revoke one first.")})
    def post(self, request):
        data = self.validated(TowerAgentIn, request.data)
        issued = services.agent_create(org=request.org, name=data["name"], scopes=data["scopes"], **self.actor(request))
        return Response({**services.agent_record(issued.agent), "key": issued.raw, "key_shown_once": True}, status=201)


class AgentDetailView(OrgView):
    """Revoke an agent: its key fails from the next request (401)."""

    @extend_schema(tags=TAGS, request=None, responses={200: TowerAgentOut, **tower_errors(401, 403, 404)})
    def delete(self, request, agent_id):
        agent = services.agent_revoke(org=request.org, agent_id=agent_id, **self.actor(request))
        return Response(services.agent_record(agent))


class CapabilitiesView(TowerView):
    """The operations this agent may call, each with its JSON Schema input, kind, compensation and
    the facts its policy can test. With the organization key: every operation."""

    @extend_schema(tags=TAGS, responses={200: TowerCapabilitiesOut, **tower_errors(401, 403)})
    def get(self, request):
        agent = self.agent_of(request)
        return Response({"agent_id": str(agent.id) if agent else None,
                         "operations": services.capabilities_list(agent=agent)})


class DecideView(TowerView):
    """What the policy would decide for this operation and input: `auto`, `review` or `reject`, with
    the reasons and the facts it looked at. No side effect; takes one unit of the daily decision quota."""

    @extend_schema(tags=TAGS, request=TowerDecideIn, responses={200: TowerDecisionOut, **tower_errors(
        400, 401, 403, 429, s403="`out_of_scope`: the agent's scopes do not include the operation.",
        s429="`decision_quota`: the day's decisions are used up; see Retry-After.")})
    def post(self, request):
        data = self.validated(TowerDecideIn, request.data)
        return Response(services.decide(org=request.org, agent=self.agent_of(request), **data))


class ActionCreateView(TowerView):
    """Ask for an operation to run. The policy decides: executed (200), held for a person's review
    (202; follow it with GET actions/{id} or the `tower.action.*` webhooks), or refused (422, the body
    is the action). Idempotent per agent on `idempotency_key` (24 hours): the same key and body replay
    the first answer with `Idempotency-Replayed: true`; a different body is 422, a request still
    running 409. `dry_run`: the decision and validation only, nothing stored, executed or receipted.
    Needs an agent key (an organization key gets 403 once the body is valid)."""

    @extend_schema(tags=TAGS, request=TowerActionIn, auth=[{"AgentKey": []}], responses={
        200: OpenApiResponse(TowerActionOut, description="Executed, or a dry run."),
        202: OpenApiResponse(TowerActionOut, description="Held for review: state `pending_review`."),
        422: OpenApiResponse(TowerActionRefusedOut, description="Refused by policy (`policy_rejected`), the legacy system "
                             "refused the write (`execution_failed`), or the idempotency key was used with another body."),
        **tower_errors(400, 401, 403, 409, 429,
                       s403="`agent_key_required` (an organization key) or `out_of_scope`.",
                       s409="`idempotency_in_progress`: the first request with this key is still running.",
                       s429="`monthly_quota` or, for a dry run, `decision_quota`; see Retry-After.")})
    def post(self, request):
        data = self.validated(TowerActionIn, request.data)
        agent = self.agent_of(request)
        if agent is None:
            raise errors.forbidden("An organization key cannot request actions: POST /api/v1/tower/actions takes an "
                                   "agent key (svc_agent_…), outside the organization key's scope.", "agent_key_required")
        outcome = services.action_create(org=request.org, agent=agent, **data)
        response = Response(outcome.body, status=outcome.status)
        if outcome.replayed:
            response[idempotency.REPLAY_HEADER] = "true"
        return response


class ActionDetailView(TowerView):
    """One action: its state, decision and reasons, result, review and receipts."""

    @extend_schema(tags=TAGS, responses={200: TowerActionOut, **tower_errors(401, 403, 404)})
    def get(self, request, action_id):
        action = services.action_get(org=request.org, agent=self.agent_of(request), action_id=action_id)
        return Response(services.action_record(action))


class ActionCompensateView(TowerView):
    """Undo an executed action by its operation's compensation (200, state `compensated`, a receipt).
    Calling it again answers the same. 409 when the action was not executed or cannot be undone."""

    @extend_schema(tags=TAGS, request=None, responses={200: TowerActionOut, **tower_errors(
        401, 403, 404, 409, s409="`not_compensable`: not executed, or its operation cannot be undone.")})
    def post(self, request, action_id):
        action = services.action_compensate(org=request.org, agent=self.agent_of(request), action_id=action_id,
                                            **self.actor(request))
        return Response(services.action_record(action))


class ReceiptDetailView(TowerView):
    """One receipt of the organization's chain, by id (`rcpt_…`) or sequence number."""

    @extend_schema(tags=TAGS, parameters=[OpenApiParameter("ref", str, OpenApiParameter.PATH,
                                                           description="A receipt id (`rcpt_…`) or a sequence number.")],
                   responses={200: TowerReceiptOut, **tower_errors(401, 403, 404)})
    def get(self, request, ref):
        return Response(receipt_record(services.receipt_find(org=request.org, ref=ref)))


class ReceiptVerifyView(TowerView):
    """Recompute hashes and links and check the signatures over a range of the chain (at most 10,000
    receipts a call): `ok`, `checked`, `first_break` (where and why it breaks) and `latest_sequence`."""

    @extend_schema(tags=TAGS, parameters=[TowerVerifyQueryIn], responses={200: TowerVerifyOut, **tower_errors(400, 401, 403)})
    def get(self, request):
        data = self.validated(TowerVerifyQueryIn, request.query_params)
        if data.get("to") is not None and data["to"] < data["from"]:
            raise errors.bad_request("to: must not be less than from.", field="to")
        return Response(services.receipts_verify(org=request.org, start=data["from"], end=data.get("to")))


class ReceiptExportView(TowerView):
    """A range of the chain as full receipts (at most 10,000 a call), for offline verification with
    tools/tower_verify_receipts.py and the public key alone."""

    @extend_schema(tags=TAGS, parameters=[TowerVerifyQueryIn], responses={200: TowerReceiptExportOut, **tower_errors(400, 401, 403)})
    def get(self, request):
        data = self.validated(TowerVerifyQueryIn, request.query_params)
        rows = services.receipts_export(org=request.org, start=data["from"], end=data.get("to"))
        return Response({"receipts": [receipt_record(r) for r in rows], "public_key": signing.public_key_record()})


class PublicKeyView(ApiView):
    """The Ed25519 public key that signs receipts: verify a receipt with it alone (see the README)."""

    auth = "none"

    @extend_schema(tags=TAGS, responses={200: TowerPublicKeyOut})
    def get(self, request):
        return Response(signing.public_key_record())


class TemplateView(OrgView):
    """Load the starter workflow "email purchase order to order entry": 201 loaded, 200 already there."""

    @extend_schema(tags=TAGS, request=None, responses={201: TowerTemplateOut, 200: TowerTemplateOut, **tower_errors(401, 403)})
    def post(self, request):
        summary, created = services.template_load(org=request.org, **self.actor(request))
        return Response(summary, status=201 if created else 200)


class CheckoutView(OrgView):
    """Start a Tower subscription by card: 201 with a Stripe Checkout `url`. 409 `already_subscribed`;
    502 `payment_processor`; 503 `billing_disabled` while billing is not enabled."""

    @extend_schema(tags=TAGS, request=None, responses={201: TowerCheckoutOut, **tower_errors(
        401, 403, 409, 502, 503, s409="`already_subscribed`: the organization already has a Tower subscription.",
        s502="`payment_processor`: the payment processor failed.", s503="`billing_disabled`: billing is not enabled.")})
    def post(self, request):
        return Response(services.subscription_checkout(org=request.org), status=201)


class SubscriptionView(OrgView):
    """Tower's status for the organization: the subscription, quotas, this month's and today's usage, pricing.
    DELETE schedules the subscription to end with the current period (409 `no_subscription` without an active
    one; 503 `billing_disabled` while billing is not enabled)."""

    @extend_schema(tags=TAGS, responses={200: TowerSubscriptionOut, **tower_errors(401, 403)})
    def get(self, request):
        return Response(services.subscription_get(org=request.org))

    @extend_schema(tags=TAGS, request=None, responses={200: TowerCancelOut, **tower_errors(
        401, 403, 409, 502, 503, s409="`no_subscription`: no active subscription (or it already ends with the period).",
        s502="`payment_processor`: the payment processor failed.", s503="`billing_disabled`: billing is not enabled.")})
    def delete(self, request):
        return Response(services.subscription_cancel(org=request.org))
