"""The pay-per-use routes under /api/x402/: each validates like its keyed twin, then is paid over x402
(billing.x402.X402View) and answered by the product's own service function. No key, no daily quota."""

from django.http import HttpResponse
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.response import Response

from billing.serializers import X402PaymentRequiredOut
from billing.x402 import X402View
from core.errors import BadGateway
from core.schema import errors

TAGS = ["Payments (x402)"]
PAYMENT_SIGNATURE = OpenApiParameter(
    "PAYMENT-SIGNATURE", str, OpenApiParameter.HEADER, required=False,
    description="base64 JSON x402 v2 PaymentPayload: one of the 402's `accepts`, signed (EIP-3009 transferWithAuthorization, "
                "EIP-712). Without it the answer is 402 with PAYMENT-REQUIRED.",
)


def paid_route(ok, *, price: str, extra_errors=(), parameters=(), **described):
    """The schema of an x402 route: its answer, 402 with the PaymentRequired object, and its errors."""
    return extend_schema(
        tags=TAGS, parameters=[PAYMENT_SIGNATURE, *parameters],
        responses={
            200: OpenApiResponse(ok, description=f"Paid ({price} in USDC on Base) and answered; PAYMENT-RESPONSE holds the "
                                                 "base64 JSON settlement (transaction hash, payer, network)."),
            402: OpenApiResponse(X402PaymentRequiredOut, description="Payment required or refused: PAYMENT-REQUIRED (base64 "
                                 "JSON) and the body carry the requirements; `error` says why. Also when settlement fails "
                                 "(nothing is charged and the paid answer is withheld)."),
            **errors(400, *extra_errors, 502, 503, s502="The payment facilitator or the product failed; nothing is settled.",
                     s503="x402 is not enabled on this service (no receiving address configured).", **described),
        },
    )


class EvaluateX402View(X402View):
    """Guardrails evaluate, paid per call over x402 ($0.002): the body of POST /api/v1/evaluate (keyless limits:
    input up to 2,000 characters, prebuilt rule sets). A request that fails (bad input, unknown rule set) is
    answered without payment being settled."""

    http_method_names = ["post", "options"]
    price = "$0.002"
    description = "Guardrails evaluation: verdict per rule, recommended action, confidence"

    def check(self, request):
        from guardrails import services
        from guardrails.serializers import EvaluateIn

        data = self.validated(EvaluateIn, request.data)
        services.input_check(text=data["input"], keyless=True)
        services.context_check(data.get("context"), data.get("metadata"))
        services.rule_set_resolve(org=None, slug=data.get("rule_set"))
        return data

    def paid(self, request, data):
        from guardrails import services
        from guardrails.serializers import EvaluationOut

        body = services.evaluation_create(org=None, input=data["input"], rule_set=data.get("rule_set"),
                                          metadata=data.get("metadata"), context=data.get("context"))
        return Response(EvaluationOut(body).data)


class AtlasLookupX402View(X402View):
    """Atlas lookup, paid per call over x402 ($0.001): what a User-Agent string claims to be."""

    http_method_names = ["get", "options"]
    price = "$0.001"
    description = "Atlas lookup: what a User-Agent string claims to be and how to verify it"

    def check(self, request):
        from atlas.serializers import LookupIn

        return self.validated(LookupIn, request.query_params)

    def paid(self, request, data):
        from atlas import services

        return Response(services.lookup(user_agent=data["user_agent"]))


class AtlasReportX402View(X402View):
    """The full Atlas report in Markdown, paid over x402 ($9). The official x402 client refuses payments over
    $1 by default: raise its cap (`set_spend_controls({"max_amount_per_payment": "$10"})`)."""

    http_method_names = ["get", "options"]
    price = "$9"
    description = "The full Atlas report (Markdown)"
    mime_type = "text/markdown"
    max_timeout_seconds = 300

    def paid(self, request, data):
        from atlas import reports

        body = reports.report_markdown(org=None, section="full", _allowed=True)
        return HttpResponse(body, content_type="text/markdown; charset=utf-8")


class BeaconX402View(X402View):
    """A Beacon check of a site, paid over x402 ($1): the report is the response. A URL that is not a public
    http(s) address is a 400 and a site that does not answer at all a 422, both before any payment."""

    http_method_names = ["get", "options"]
    price = "$1"
    description = "Beacon check of a site: can agents find it, read it and use it"
    max_timeout_seconds = 300

    def check(self, request):
        from beacon import services

        url = services.normalize_url(request.query_params.get("url", ""))
        services._answers_at_all(url)
        return url

    def paid(self, request, url):
        from beacon import constants, services
        from beacon.models import Check
        from beacon.views import check_out

        done = services.check_run_now(url=url, paid_by="x402")
        if done.status != constants.DONE:
            # Not settled, so not retried later either: a paid scan is this request's or nobody's.
            Check.objects.filter(id=done.id).exclude(status=constants.DONE).update(
                status=constants.FAILED, error="The paid scan failed; the payment was not settled.")
            raise BadGateway("The check could not be completed; the payment was not settled.")
        return Response(check_out(done))


class PreflightX402View(X402View):
    """A Preflight check, paid over x402 ($0.01): the body of POST /api/v1/preflight/checks. A transaction
    that cannot be decoded is a 400 before payment; a node that cannot be reached is a 502, not settled."""

    http_method_names = ["post", "options"]
    price = "$0.01"
    description = "Preflight check of one Solana transaction against a policy"

    def check(self, request):
        from preflight.decoding import decode_transaction
        from preflight.serializers import CheckIn

        data = self.validated(CheckIn, request.data)
        decode_transaction(data["transaction"])  # an undecodable transaction is a 400 before payment
        return data

    def paid(self, request, data):
        from preflight import services

        check = services.check_create(transaction=data["transaction"], policy=data["policy"], org=None, channel="x402")
        return Response(services.verdict_full(check))


def _schemas():
    """Attach each route's schema (imports of the product serializers wait until the URLconf loads)."""
    from atlas.serializers import LookupIn, LookupOut
    from guardrails.serializers import EvaluateIn, EvaluationOut
    from preflight.serializers import CheckIn, VerdictOut

    beacon_url = OpenApiParameter("url", str, OpenApiParameter.QUERY, required=True, description="The site, e.g. https://example.com/.")
    extend_schema(request=EvaluateIn)(paid_route(EvaluationOut, price="$0.002", extra_errors=(404,), s404="Rule set not found.")(EvaluateX402View))
    paid_route(LookupOut, price="$0.001", parameters=[LookupIn])(AtlasLookupX402View)
    paid_route(OpenApiTypes.STR, price="$9")(AtlasReportX402View)
    paid_route(OpenApiTypes.OBJECT, price="$1", extra_errors=(422,), parameters=[beacon_url], s422="The site does not answer at all.")(BeaconX402View)
    extend_schema(request=CheckIn)(paid_route(VerdictOut, price="$0.01")(PreflightX402View))


_schemas()

urlpatterns = [
    path("evaluate", EvaluateX402View.as_view()),
    path("atlas/lookup", AtlasLookupX402View.as_view()),
    path("atlas/report", AtlasReportX402View.as_view()),
    path("beacon", BeaconX402View.as_view()),
    path("preflight", PreflightX402View.as_view()),
]
