"""Atlas routes: thin views over atlas.services and atlas.reports."""

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from atlas import reports, services
from atlas.serializers import (
    AgentDetailOut,
    AgentListOut,
    AgentQueryIn,
    AgentsQueryIn,
    AtlasCancelOut,
    AtlasCheckoutIn,
    AtlasCheckoutOut,
    AtlasSubscriptionOut,
    AtlasSwitchOut,
    DatasetQueryIn,
    LookupIn,
    LookupOut,
    RegistrationIn,
    RegistrationListOut,
    RegistrationOut,
    ReportQueryIn,
    SightingsQueryIn,
    VerifyIn,
    VerifyOut,
)
from billing.api import MeteredView
from core.api import ApiView
from core.errors import BadRequest, validation_message
from core.net import client_ip
from core.schema import ErrorOut, errors

TAGS = ["Atlas"]


class ErrorWithFieldOut(ErrorOut):
    field = serializers.CharField(required=False, help_text="The request field that is wrong.")


def _actor(request) -> dict:
    return {"actor": request.api_key.prefix if request.api_key else "", "ip": client_ip(request)}


def _text(body: str, content_type: str, filename: str | None = None) -> HttpResponse:
    response = HttpResponse(body, content_type=content_type)
    if filename:
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


class _OwnFormatParam:
    """`format` is this route's own query parameter (json, csv, md), not DRF's renderer override."""

    def perform_content_negotiation(self, request, force=False):
        renderer = self.get_renderers()[0]
        return renderer, renderer.media_type


class AtlasOverviewView(ApiView):
    """Atlas at a glance: registry counts, datasets, tiers and the endpoints."""

    auth = "none"

    @extend_schema(tags=TAGS, responses={200: OpenApiTypes.OBJECT})
    def get(self, request):
        return Response(reports.overview())


class AgentListView(ApiView):
    """Search the registry: free text `q` over name, operator, user agents and description; filter by `purpose`
    (substring of the class), `operator` and `verification`; page with `limit` (1-250) and `offset`."""

    auth = "none"

    @extend_schema(tags=TAGS, operation_id="atlas_agents_list", parameters=[AgentsQueryIn], responses={200: AgentListOut, **errors(400)})
    def get(self, request):
        query = self.validated(AgentsQueryIn, request.query_params)
        agents, total = services.agents_search(
            q=query.get("q", ""), purpose=query.get("purpose", ""), operator=query.get("operator", ""),
            verification=query.get("verification", ""), limit=query["limit"], offset=query["offset"],
        )
        body = {"agents": [services.entry_public(agent) for agent in agents], "total": total, "limit": query["limit"],
                "offset": query["offset"]}
        return Response(body)


class AgentDetailView(ApiView):
    """One registry entry. Public fields for everyone; `fields=full` (curated fields and operator findings) with
    Atlas Pro or Team, where it is the default. `osint` lists operator findings."""

    auth = "optional"

    @extend_schema(tags=TAGS, parameters=[AgentQueryIn], responses={200: AgentDetailOut, **errors(400, 401, 402, 404)})
    def get(self, request, slug):
        query = self.validated(AgentQueryIn, request.query_params)
        return Response(services.agent_get(slug=slug, org=request.org, fields=query.get("fields"), osint=query["osint"]))


class LookupView(MeteredView):
    """What a User-Agent string claims to be: the agent (whole product tokens, most specific first), its operator
    and purpose, and how the claim can be verified. A string alone never verifies anything (`verified` is null):
    POST lookup/verify with the client address and signature headers for that. Keyless 10 a day per client;
    free key 100; Pro 10,000; Team 100,000."""

    auth = "optional"
    meter = "atlas_lookups"
    product = "atlas"

    @extend_schema(tags=TAGS, parameters=[LookupIn], responses={
        200: OpenApiResponse(LookupOut, description="Headers X-Atlas-Lookup-Limit and X-Atlas-Lookup-Remaining."),
        **errors(400, 401, 403, 429)})
    def get(self, request):
        query = self.validated(LookupIn, request.query_params)
        return Response(services.lookup(user_agent=query["user_agent"]))


class LookupVerifyView(MeteredView):
    """Whether a request's claim is verified: its Web Bot Auth signature (RFC 9421, key directory fetched and
    cached), the operator's published IP ranges, or forward-confirmed reverse DNS (part of the IP method).
    Counts as one lookup."""

    auth = "optional"
    meter = "atlas_lookups"
    product = "atlas"

    @extend_schema(tags=TAGS, request=VerifyIn, responses={200: VerifyOut, **errors(400, 401, 403, 429)})
    def post(self, request):
        data = self.validated(VerifyIn, request.data)
        return Response(services.claim_verify(user_agent=data["user_agent"], ip=data.get("ip") or None,
                                              method=data.get("method") or "GET", url=data.get("url") or "",
                                              headers=data.get("headers") or None))


class SummaryView(ApiView):
    """Registry counts, traffic shares of browser agents seen here, and the report summary."""

    auth = "none"

    @extend_schema(tags=TAGS, responses={200: OpenApiTypes.OBJECT})
    def get(self, request):
        return Response(reports.summary())


class SightingsView(_OwnFormatParam, ApiView):
    """Daily requests to this service by registered agents (verified by IP where possible), aggregated per agent
    and day; no addresses are kept. 7 days of history without a key, 90 with one. `format=csv` for a file."""

    auth = "optional"

    @extend_schema(tags=TAGS, parameters=[SightingsQueryIn], responses={
        (200, "application/json"): OpenApiTypes.OBJECT, (200, "text/csv"): OpenApiTypes.STR, **errors(400, 401)})
    def get(self, request):
        query = self.validated(SightingsQueryIn, request.query_params)
        body = services.sightings_list(days=query["days"], agent=query.get("agent", ""), keyed=request.org is not None)
        if query["format"] == "csv":
            return _text(reports.sightings_csv(body), "text/csv; charset=utf-8", "atlas-sightings.csv")
        return Response(body)


class TrafficView(ApiView):
    """The report over the whole observed period of sightings, rebuilt nightly; 404 until a sighting is recorded."""

    auth = "none"

    @extend_schema(tags=TAGS, responses={200: OpenApiTypes.OBJECT, **errors(404)})
    def get(self, request):
        return Response(services.traffic_get())


class DatasetListView(ApiView):
    """The datasets: formats, row counts, licence, and whether the caller's tier may download each."""

    auth = "optional"

    @extend_schema(tags=TAGS, operation_id="atlas_datasets_list", responses={200: OpenApiTypes.OBJECT, **errors(401)})
    def get(self, request):
        return Response(reports.datasets_list(org=request.org))


class DatasetDetailView(_OwnFormatParam, ApiView):
    """Download a dataset (`format` json, csv or md, as the dataset offers). Pro datasets need Atlas Pro or Team
    (402); traffic-shares is free."""

    auth = "optional"

    @extend_schema(tags=TAGS, parameters=[DatasetQueryIn], responses={
        (200, "application/json"): OpenApiTypes.OBJECT, (200, "text/csv"): OpenApiTypes.STR,
        (200, "text/markdown"): OpenApiTypes.STR, **errors(400, 401, 402, 404)})
    def get(self, request, dataset_id):
        query = self.validated(DatasetQueryIn, request.query_params)
        body, content_type, filename = reports.dataset_file(dataset_id=dataset_id, org=request.org, format=query.get("format"))
        return _text(body, content_type, filename)


class ReportView(ApiView):
    """The Atlas report in Markdown: `section=summary` is free; the full report needs Atlas Pro or Team (or x402)."""

    auth = "optional"

    @extend_schema(tags=TAGS, parameters=[ReportQueryIn], responses={(200, "text/markdown"): OpenApiTypes.STR,
                                                                      **errors(400, 401, 402)})
    def get(self, request):
        query = self.validated(ReportQueryIn, request.query_params)
        return _text(reports.report_markdown(org=request.org, section=query.get("section") or "summary"),
                     "text/markdown; charset=utf-8")


def _registration_data(request) -> dict:
    serializer = RegistrationIn(data=request.data)
    if not serializer.is_valid():
        message, field = validation_message(serializer.errors)
        name = field.split(".")[0].split("[")[0]
        raise BadRequest(message, extra={"field": name} if name else None)
    return dict(serializer.validated_data)


class RegistrationListView(ApiView):
    """Register your own agent (proven by control of your domain), or list your registrations, newest first."""

    @extend_schema(tags=TAGS, operation_id="atlas_registrations_list", responses={200: RegistrationListOut, **errors(401, 403)})
    def get(self, request):
        rows = services.registration_list(org=request.org)
        return Response({"registrations": [services.registration_out(row) for row in rows]})

    @extend_schema(tags=TAGS, request=RegistrationIn, responses={
        201: RegistrationOut, 400: OpenApiResponse(ErrorWithFieldOut, description="`field` names the bad field."),
        **errors(401, 403, 409, 429, s409="A token contains, or sits inside, a registry token; or the name is taken.",
                 s429="The organization already has 10 registrations.")})
    def post(self, request):
        data = _registration_data(request)
        registration = services.registration_create(org=request.org, **data, **_actor(request))
        return Response(services.registration_out(registration), status=201)


class RegistrationDetailView(ApiView):
    """One registration (with the values to publish while unverified); DELETE withdraws it, and a published entry
    leaves the registry."""

    @extend_schema(tags=TAGS, responses={200: RegistrationOut, **errors(401, 403, 404)})
    def get(self, request, registration_id):
        return Response(services.registration_out(services.registration_get(org=request.org, registration_id=registration_id)))

    @extend_schema(tags=TAGS, request=None, responses={200: RegistrationOut, **errors(401, 403, 404)})
    def delete(self, request, registration_id):
        row = services.registration_withdraw(org=request.org, registration_id=registration_id, **_actor(request))
        return Response(services.registration_out(row))


class RegistrationVerifyView(ApiView):
    """Check the domain proof (DNS TXT at `_svc-atlas.<domain>` or the well-known file): published, or held for
    review when the operator name is already another's. 422 while no proof is found; 409 when withdrawn, rejected
    or colliding. Safe to call again."""

    @extend_schema(tags=TAGS, request=None, responses={200: RegistrationOut, **errors(401, 403, 404, 409, 422)})
    def post(self, request, registration_id):
        row = services.registration_verify(org=request.org, registration_id=registration_id, **_actor(request))
        return Response(services.registration_out(row))



class CheckoutView(ApiView):
    """Buy an Atlas tier (pro or team): 201 with a Stripe Checkout `url`; with a live tier already, the
    subscription switches to the other tier in place, prorated (200). 409 when already on the tier; 503 while
    billing is not enabled."""

    @extend_schema(tags=TAGS, operation_id="atlas_checkout", request=AtlasCheckoutIn, responses={
        201: AtlasCheckoutOut, 200: AtlasSwitchOut,
        **errors(400, 401, 403, 409, 502, 503, s400="`plan` is not pro or team, or a URL is invalid.",
                 s409="Already on the tier.", s502="The payment processor failed.", s503="Billing is not enabled.")})
    def post(self, request):
        data = self.validated(AtlasCheckoutIn, request.data)
        result = services.subscription_checkout(org=request.org, **data)
        if result.get("switched"):
            return Response({"plan": result["plan"], "switched": True, "status": result.get("status")})
        return Response({key: result[key] for key in ("url", "plan", "expires_in_seconds")}, status=201)


class SubscriptionView(ApiView):
    """The Atlas tier, its limits and today's lookups; DELETE schedules the tier's subscription to end with the
    current period (409 without an active one; 503 while billing is not enabled)."""

    @extend_schema(tags=TAGS, operation_id="atlas_subscription_retrieve", responses={200: AtlasSubscriptionOut, **errors(401, 403)})
    def get(self, request):
        return Response(services.subscription_status(org=request.org))

    @extend_schema(tags=TAGS, operation_id="atlas_subscription_cancel", request=None, responses={
        200: AtlasCancelOut, **errors(401, 403, 409, 502, 503, s409="No active Atlas subscription (or it already ends with the period).",
                                      s502="The payment processor failed.", s503="Billing is not enabled.")})
    def delete(self, request):
        return Response(services.subscription_cancel(org=request.org))
