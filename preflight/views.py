"""Preflight's routes: thin views over preflight.services."""

from django.conf import settings
from django.shortcuts import render
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from billing.api import MeteredView
from core.api import ApiView
from core.schema import errors
from core.throttle import throttle
from preflight import services
from preflight.serializers import CheckIn, OverviewOut, RecordOut, RecordQueryIn, ReportIn, ReportOut, VerdictOut

TAG = ["Preflight"]


def wants_html(request) -> bool:
    """A browser asking for a page: its Accept header lists text/html first."""
    accept = request.META.get("HTTP_ACCEPT", "")
    return accept.split(",")[0].split(";")[0].strip().lower() == "text/html"


class PageOrJsonView(ApiView):
    """A route that is also a web page: a browser's Accept never gets a 406; JSON otherwise."""

    def perform_content_negotiation(self, request, force=False):
        return super().perform_content_negotiation(request, force=True)


class PreflightOverviewView(ApiView):
    """What Preflight does, the reason codes, the decisions on open cases, and the guarantee (not active)."""

    auth = "none"

    @extend_schema(tags=TAG, responses={200: OverviewOut})
    def get(self, request):
        return Response(services.overview())


class CheckCreateView(MeteredView):
    """Check one Solana transaction (base64, legacy or v0, signed or not) against a policy.

    The transaction is simulated (never sent) and judged by the accounts before and after; the answer
    is `allow` or `refuse` with reasons, signed and published. A refusal is a completed check (200)
    and counts as one evaluation, like an allow; a transaction that cannot be decoded is a 400 and
    is not counted.
    """

    auth = "required"
    scope = "full"
    idempotent = True
    meter = "evaluations"
    product = "preflight"

    @extend_schema(tags=TAG, request=CheckIn, responses={200: VerdictOut, **errors(400, 401, 403, 429, 502, 503, s502="The Solana node could not be reached.", s503="The node simulator is selected but no node is configured.")})
    def post(self, request):
        data = self.validated(CheckIn, request.data)
        check = services.check_create(transaction=data["transaction"], policy=data["policy"], org=request.org)
        return Response(services.verdict_full(check))


class CheckDetailView(PageOrJsonView):
    """A verdict. Anyone gets what the record publishes; the organization that asked also gets the
    reasons' details, the effects and its policy. A browser gets the page."""

    auth = "optional"
    scope = "evaluate"

    @extend_schema(tags=TAG, responses={200: VerdictOut, **errors(401, 404)}, description="VerdictOut for the organization that asked; the public fields (VerdictPublicOut) for anyone else.")
    def get(self, request, check_id):
        check = services.check_get(check_id=check_id)
        if wants_html(request):
            return render(request, "preflight/record.html", {"verdicts": [services.verdict_public(check)], "single": True, "base_url": settings.BASE_URL})
        if request.org is not None and check.org_id == request.org.pk:
            return Response(services.verdict_full(check))
        return Response(services.verdict_public(check))


class ReportCreateView(ApiView):
    """Report the transaction that landed for a verdict (`{signature}`); it is read from the chain,
    compared with the verdict, and published. A miss: the answer was allow, the same transaction
    landed within the window, and it took more than the policy permitted."""

    auth = "none"

    @extend_schema(tags=TAG, request=ReportIn, responses={201: ReportOut, 200: ReportOut, **errors(400, 404, 422, 429, 502, 503, s422="The transaction was not found on the chain.", s503="No Solana node is configured.")})
    def post(self, request, check_id):
        data = self.validated(ReportIn, request.data)
        services.check_get(check_id=check_id)
        throttle(request, group="preflight.report", rate=settings.PREFLIGHT_REPORT_RATE, message="Too many reports from this address; try again later.")
        report, created = services.report_create(check_id=check_id, signature=data["signature"])
        body = {**services.report_public(report), "check_id": check_id, "chain": report.chain}
        return Response(body, status=201 if created else 200)


class RecordView(PageOrJsonView):
    """The public record: every verdict, newest first, with its reports; never the wallet, amounts or
    the transaction. A browser gets the page."""

    auth = "none"

    @extend_schema(tags=TAG, parameters=[RecordQueryIn], responses={200: RecordOut, **errors(400)})
    def get(self, request):
        query = self.validated(RecordQueryIn, request.query_params)
        verdicts, next_cursor = services.record_list(limit=query["limit"], cursor=query.get("cursor"))
        if wants_html(request):
            return render(request, "preflight/record.html", {"verdicts": verdicts, "next_cursor": next_cursor, "base_url": settings.BASE_URL})
        return Response({"verdicts": verdicts, "next_cursor": next_cursor})


