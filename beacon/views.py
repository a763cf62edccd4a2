"""Beacon's routes: thin views over beacon.services."""

import json

from django.conf import settings
from django.http import HttpResponse
from django.template.loader import render_to_string
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from core.api import ApiView
from core.errors import BadRequest
from core.schema import errors, obj
from core.throttle import throttle

from . import constants, sample, services
from .serializers import BeaconCheckOut, BeaconCheckStartIn, BeaconReportOut, BeaconSavedListOut, BeaconSavedOut

TAGS = ["Beacon"]


def check_out(check) -> dict:
    return {
        "id": check.id, "url": check.url, "status": check.status, "status_url": services.check_status_url(check),
        "report_url": services.check_status_url(check) + "?format=html",
        "checkout_url": (check.checkout_url or None) if check.status == constants.AWAITING_PAYMENT else None,
        "paid_by": check.paid_by, "created_at": check.created_at.isoformat(),
        "started_at": check.started_at.isoformat() if check.started_at else None,
        "finished_at": check.finished_at.isoformat() if check.finished_at else None,
        "attempts": check.attempts, "error": check.error, "report": check.report,
    }


class JsonOnly:
    """DRF reads `?format=` as a renderer choice; here it picks a file format, so negotiation always says JSON."""

    def perform_content_negotiation(self, request, force=False):
        renderer = JSONRenderer()
        return renderer, renderer.media_type


class BeaconOverviewView(JsonOnly, ApiView):
    """Beacon: what it checks, how it behaves on your site (the conduct), its states, price and routes."""

    auth = "none"

    @extend_schema(tags=TAGS, responses={200: OpenApiTypes.OBJECT})
    def get(self, request):
        return Response({
            "product": "beacon",
            "description": "One paid, read-only check of a site: can agents find it, read it and use it; a score per "
                           "category and concrete fixes.",
            "price": {"card_usd": 5, "x402_usd": 1, "billing_enabled": settings.BILLING_ENABLED,
                      "free_while_billing_disabled": settings.BEACON_FREE_WHEN_BILLING_DISABLED and not settings.BILLING_ENABLED},
            "conduct": {
                "read_only": True,
                "user_agent": f"{constants.USER_AGENT_PRODUCT} (+{settings.BASE_URL}/beacon)",
                "max_requests_per_check": settings.BEACON_MAX_REQUESTS,
                "preflight_requests": 1,
                "max_seconds_per_check": settings.BEACON_CHECK_SECONDS,
                "mcp": "initialize (or server/discover for 2026 servers) and tools/list only; never a tool call",
                "a2a": "the agent card is read; the agent is never messaged",
                "robots_txt": "named AI agents are judged by their product tokens in robots.txt; their user agents are never sent",
                "addresses": "public addresses only: every request and redirect is checked, private and loopback space refused",
                "surfaces": ["robots.txt", "sitemap", "llms.txt", "llms-full.txt", "markdown version", "home page",
                             "MCP server card", "MCP endpoint", "MCP Registry", "A2A agent card", "api-catalog", "OpenAPI",
                             "x402, UCP, ACP, AP2 payment signals"],
            },
            "checks": [{"id": c.id, "category": c.category, "judged_by_model": c.judged_by_model, "weight": c.weight, "title": c.title}
                       for c in constants.CHECKS],
            "states": constants.STATE_MEANINGS,
            "scoring": "Points: pass 1, partial 0.5, fail 0; not_applicable and error count for nothing. A category "
                       "(find, read, use) scores 100 × Σ(weight × points) / Σ(weight) over its counted checks, or null; "
                       "overall is the mean of the category scores. Suggestions come by impact: weight × points lost.",
            "judge": "chat (an OpenAI-compatible model; its quote must appear verbatim in the page)" if settings.BEACON_JUDGE_URL
                     else "embedded (sentence patterns; no network, no model)",
            "routes": {"start": "POST /api/v1/beacon/checks", "status": "GET /api/v1/beacon/checks/{id}",
                       "sample": "GET /api/v1/beacon/sample", "saved": "GET /api/v1/beacon/saved", "x402": "GET /api/x402/beacon?url="},
        })


class CheckStartView(JsonOnly, ApiView):
    """Start a check of a site. 400 unless `url` is a public http(s) URL; 422 when the site does not answer at
    all (refused before any payment). While billing is not enabled the check starts at once, free, and
    `checkout_url` is null; with billing it waits at awaiting_payment for the card payment at `checkout_url`.
    Poll `status_url`. With an organization key the check belongs to the organization (saved reports, the
    beacon.check.finished webhook); an organization with a verified domain checks its own domain free."""

    auth = "optional"

    @extend_schema(tags=TAGS, request=BeaconCheckStartIn, responses={
        201: BeaconCheckOut, **errors(400, 401, 403, 413, 415, 422, 429, 503, s422="The site does not answer at all.",
                                s503="Card payment is not enabled and free checks are switched off.")})
    def post(self, request):
        data = self.validated(BeaconCheckStartIn, request.data)
        if request.org is None:
            throttle(request, group="beacon-start", rate=settings.BEACON_START_RATE,
                     message="Too many Beacon checks from this address; try again later.")
        check = services.check_start(url=data["url"], org=request.org)
        check.refresh_from_db()
        return Response(check_out(check), status=201)


FORMAT = OpenApiParameter("format", str, enum=["json", "md", "html"], required=False,
                          description="json (default), md for Markdown, html for the report page.")
DOWNLOAD = OpenApiParameter("download", str, enum=["0", "1"], required=False,
                            description="1: send as a file (report JSON, or Markdown with format=md).")


class CheckDetailView(JsonOnly, ApiView):
    """A check's status and, once done, its report. `format=md` gives Markdown, `format=html` the page for
    people (also what a browser gets, by its Accept header); `download=1` sends the Markdown or the report
    JSON as a file. The id is the capability: anyone
    who has it may read the report."""

    auth = "none"

    @extend_schema(tags=TAGS, parameters=[FORMAT, DOWNLOAD], responses={
        200: OpenApiResponse(BeaconCheckOut, description="The check; text/markdown or text/html with format=md or html."),
        **errors(400, 404)})
    def get(self, request, check_id: str):
        browser = request.headers.get("Accept", "").lower().startswith("text/html")
        fmt = request.query_params.get("format", "html" if browser else "json")
        download = request.query_params.get("download", "0")
        if fmt not in ("json", "md", "html") or download not in ("0", "1"):
            raise BadRequest("format must be json, md or html, and download 0 or 1.")
        check = services.check_get(check_id=check_id)
        out = check_out(check)
        if fmt == "md":
            response = HttpResponse(render_to_string("beacon/report.md", {"check": out, "report": check.report}),
                                    content_type="text/markdown; charset=utf-8")
            if download == "1":
                response["Content-Disposition"] = f'attachment; filename="beacon-{check.id}.md"'
            return response
        if fmt == "html":
            return HttpResponse(render_to_string("beacon/report.html", {"check": out, "report": check.report}, request=request),
                                content_type="text/html; charset=utf-8")
        if download == "1":
            response = HttpResponse(json.dumps(out, indent=2), content_type="application/json")
            response["Content-Disposition"] = f'attachment; filename="beacon-{check.id}.json"'
            return response
        return Response(out)


class SampleView(JsonOnly, ApiView):
    """A real report: the scan of the sample site that ships with Beacon (beacon/sample_site.py), run on loopback."""

    auth = "none"

    @extend_schema(tags=TAGS, responses={200: obj("BeaconSample", note=serializers.CharField(), report=BeaconReportOut())})
    def get(self, request):
        return Response(sample.sample_report())


class SavedListView(JsonOnly, ApiView):
    """The organization's saved Beacon reports, newest first."""

    @extend_schema(tags=TAGS, responses={200: BeaconSavedListOut, **errors(401, 403)})
    def get(self, request):
        return Response({"saved": [_saved_out(s) for s in services.saved_list(org=request.org)]})


def _saved_out(saved) -> dict:
    check = saved.check_ref
    return {"id": check.id, "url": check.url, "status": check.status, "saved_at": saved.saved_at.isoformat(),
            "scores": (check.report or {}).get("scores"), "status_url": services.check_status_url(check)}


class SavedDetailView(JsonOnly, ApiView):
    """Save one of the organization's checks (PUT, idempotent: 201 then 200) or remove it (DELETE)."""

    @extend_schema(tags=TAGS, request=None, responses={200: BeaconSavedOut, 201: BeaconSavedOut, **errors(401, 403, 404)})
    def put(self, request, check_id: str):
        saved, created = services.saved_put(org=request.org, check_id=check_id)
        return Response(_saved_out(saved), status=201 if created else 200)

    @extend_schema(tags=TAGS, request=None, responses={200: obj("BeaconSavedRemoved", removed=serializers.CharField()), **errors(401, 403, 404)})
    def delete(self, request, check_id: str):
        services.saved_delete(org=request.org, check_id=check_id)
        return Response({"removed": check_id})


def about_page(request):
    """The page the User-Agent points to: what SvcBeacon is and how it behaves on a site."""
    from django.shortcuts import render

    return render(request, "beacon/about.html", {
        "user_agent": f"{constants.USER_AGENT_PRODUCT} (+{settings.BASE_URL}/beacon)",
        "max_requests": settings.BEACON_MAX_REQUESTS,
        "max_seconds": settings.BEACON_CHECK_SECONDS,
        "surfaces": ["robots.txt", "sitemap", "llms.txt and llms-full.txt", "the Markdown version of the home page",
                     "the home page as an agent reads it", "MCP server card and endpoint", "the MCP Registry",
                     "the A2A agent card", "api-catalog and OpenAPI", "payment signals (x402 and others)"],
        "base_url": settings.BASE_URL,
        "card_usd": 5,
        "x402_usd": 1,
    })
