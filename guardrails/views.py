"""Guardrails routes: thin views over guardrails.services."""

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from billing import metering
from billing.api import MeteredView
from core.api import ApiView
from core.errors import BadRequest, validation_message
from core.net import client_ip
from core.schema import errors
from core.throttle import throttle
from guardrails import languages, services
from guardrails.serializers import (
    BatchErrorOut,
    BatchFailedOut,
    BatchIn,
    BatchOut,
    EvaluateIn,
    EvaluationDeletedOut,
    EvaluationDeleteManyIn,
    EvaluationDeleteManyOut,
    EvaluationDetailOut,
    EvaluationListOut,
    EvaluationListQuery,
    EvaluationOut,
    EvaluationSummaryOut,
    FeedbackIn,
    FeedbackInfoOut,
    FeedbackOut,
    LanguagesOut,
    RuleSetDeletedOut,
    RuleSetIn,
    RuleSetListOut,
    RuleSetListQuery,
    RuleSetOut,
    RuleSetPatchIn,
)

TAG = ["Guardrails"]
IDEMPOTENCY = OpenApiParameter(
    "Idempotency-Key", str, OpenApiParameter.HEADER, required=False,
    description="Up to 255 characters (letters, digits, _ . : -). A retry with the same key and body within 24 hours "
                "returns the stored response with Idempotency-Replayed: true, without charging again.",
)


def _actor(request) -> dict:
    return {"actor": request.api_key.prefix if request.api_key else "", "ip": client_ip(request)}


class EvaluateView(MeteredView):
    """Check a text against a rule set: a verdict per rule and in aggregate, the recommended action
    (block > redact > review > allow), a calibrated confidence, findings with character spans, the
    redacted text when the action is redact, and the detected language. Keyless callers: 10 a day,
    2,000 characters, prebuilt rule sets only. For a message to a known recipient use
    `rule_set: "outbound-message"` with `context`."""

    auth = "optional"
    scope = "evaluate"
    meter = "evaluations"
    product = "guardrails"
    idempotent = True

    @extend_schema(
        operation_id="evaluate_create", tags=TAG, request=EvaluateIn, parameters=[IDEMPOTENCY],
        responses={200: EvaluationOut, **errors(400, 401, 403, 404, 409, 422, 429, 502,
                                                 s404="Rule set not found.", s409="The same Idempotency-Key is still running.",
                                                 s422="Idempotency-Key reused with a different body.",
                                                 s502="The evaluation engine failed.")},
    )
    def post(self, request):
        data = self.validated(EvaluateIn, request.data)
        body = services.evaluation_create(org=request.org, input=data["input"], rule_set=data.get("rule_set"),
                                          metadata=data.get("metadata"), context=data.get("context"))
        return Response(EvaluationOut(body).data)


class EvaluateBatchView(MeteredView):
    """Evaluate up to 50 items against one rule set. Each item succeeds or fails on its own (an item
    error names the problem); the whole batch is reserved against the quota up front and failed items
    are given back. 502 with the same body only when every item failed."""

    auth = "required"
    scope = "evaluate"
    meter = "evaluations"
    product = "guardrails"
    idempotent = True

    def metered_units(self, request) -> int:
        items = request.data.get("items") if isinstance(request.data, dict) else None
        if isinstance(items, list) and 1 <= len(items) <= services.BATCH_MAX_ITEMS:
            return len(items)
        return 1  # the request is invalid: validation answers 400 and the unit is given back

    @extend_schema(
        operation_id="evaluate_batch_create", tags=TAG, request=BatchIn, parameters=[IDEMPOTENCY],
        responses={200: BatchOut, 502: BatchFailedOut,
                   **errors(401, 403, 404, 409, 422, 429, s404="Rule set not found.",
                            s429="Limit reached, or the batch would not fit in what is left."),
                   400: OpenApiResponse(BatchErrorOut, description="Invalid batch; the message and `item` name the offending item.")},
    )
    def post(self, request):
        data = self._validated_batch(request.data)
        items = data["items"]
        if not 1 <= len(items) <= services.BATCH_MAX_ITEMS:
            raise BadRequest(f"items must hold 1 to {services.BATCH_MAX_ITEMS} items, not {len(items)}.")
        seen = set()
        for index, item in enumerate(items):
            if item["id"] in seen:
                raise BadRequest(f"items[{index}].id '{item['id']}' is used twice; give each item its own id.", extra={"item": item["id"]})
            seen.add(item["id"])
            try:
                services.context_check(None, item.get("metadata"), prefix=f"items[{index}].")
            except BadRequest as exc:
                raise BadRequest(exc.message, extra={"item": item["id"]}) from None
        results, failed = services.evaluation_batch(org=request.org, rule_set=data.get("rule_set"), items=items)
        body = {"rule_set": data.get("rule_set") or "default", "items": BatchOutItems(results), "succeeded": len(items) - failed, "failed": failed}
        if failed == len(items):
            return Response({"error": "Every item of the batch failed; each item's error says why.", **body}, status=502)
        if failed and request.reservation is not None:
            metering.release(request.reservation, units=failed)
            remaining = request.reservation.headers.get("X-RateLimit-Remaining")
            if remaining is not None:
                request.reservation.headers["X-RateLimit-Remaining"] = str(int(remaining) + failed)
        return Response(body)


    def _validated_batch(self, raw) -> dict:
        """BatchIn, with an invalid item named by its index and id."""
        serializer = BatchIn(data=raw)
        if serializer.is_valid():
            return serializer.validated_data
        errors_ = serializer.errors
        item_errors = errors_.get("items") if isinstance(errors_, dict) else None
        if isinstance(item_errors, dict) and item_errors and all(isinstance(k, int) for k in item_errors):
            index = min(item_errors)
            message, _ = validation_message(item_errors[index])
            raw_items = raw.get("items") if isinstance(raw, dict) else None
            item_id = raw_items[index].get("id") if isinstance(raw_items, list) and isinstance(raw_items[index], dict) else None
            raise BadRequest(f"items[{index}].{message}", extra={"item": item_id if isinstance(item_id, str) else None})
        raise ValidationError(errors_)


def BatchOutItems(results: list[dict]) -> list[dict]:  # noqa: N802 - reads as the shape it builds
    return [{"id": r["id"], "result": EvaluationOut(r["result"]).data if r["result"] else None, "error": r["error"]} for r in results]


class EvaluationListView(ApiView):
    """The organization's evaluations, newest first (filter by verdict or rule set; page with
    `cursor=<next_cursor>`), or delete them all (`confirm: "delete"`, optionally only `before` a time)."""

    scope = "evaluate"

    @extend_schema(operation_id="evaluations_list", tags=TAG, parameters=[EvaluationListQuery], responses={200: EvaluationListOut, **errors(400, 401)})
    def get(self, request):
        query = self.validated(EvaluationListQuery, request.query_params)
        rows, next_cursor = services.evaluation_list(org=request.org, limit=query["limit"], cursor=query.get("cursor"),
                                                     verdict=query.get("verdict"), rule_set=query.get("rule_set"))
        return Response({"evaluations": EvaluationSummaryOut(rows, many=True).data, "next_cursor": next_cursor})

    @extend_schema(operation_id="evaluations_delete_all", tags=TAG, request=EvaluationDeleteManyIn, responses={200: EvaluationDeleteManyOut, **errors(400, 401)})
    def delete(self, request):
        data = self.validated(EvaluationDeleteManyIn, request.data)
        return Response(services.evaluation_delete_many(org=request.org, before=data.get("before")))


class EvaluationDetailView(ApiView):
    """One evaluation with its per-rule results and, when the organization stores inputs, its input
    and context; or delete it."""

    scope = "evaluate"

    @extend_schema(operation_id="evaluations_retrieve_one", tags=TAG, responses={200: EvaluationDetailOut, **errors(401, 404)})
    def get(self, request, evaluation_id):
        evaluation = services.evaluation_get(org=request.org, evaluation_id=evaluation_id)
        return Response(EvaluationDetailOut(evaluation).data)

    @extend_schema(operation_id="evaluations_delete_one", tags=TAG, request=None, responses={200: EvaluationDeletedOut, **errors(401, 404)})
    def delete(self, request, evaluation_id):
        return Response(services.evaluation_delete(org=request.org, evaluation_id=evaluation_id))


class RuleSetListView(ApiView):
    """System rule sets (read-only) and the organization's own; create a custom rule set."""

    @extend_schema(operation_id="rule_sets_list", tags=TAG, parameters=[RuleSetListQuery], responses={200: RuleSetListOut, **errors(400, 401, 403)})
    def get(self, request):
        query = self.validated(RuleSetListQuery, request.query_params)
        return Response({"rule_sets": RuleSetOut(services.rule_set_list(org=request.org, include_inactive=query["include_inactive"]), many=True).data})

    @extend_schema(operation_id="rule_sets_create", tags=TAG, request=RuleSetIn, responses={201: RuleSetOut, **errors(400, 401, 403, 409, s409="Slug taken.")})
    def post(self, request):
        data = self.validated(RuleSetIn, request.data)
        body = services.rule_set_create(org=request.org, **data, **_actor(request))
        return Response(RuleSetOut(body).data, status=201)


class RuleSetDetailView(ApiView):
    """One rule set with its rules. PATCH changes a custom set (`rules` replaces the whole list);
    DELETE deactivates it. System rule sets answer 403 to both."""

    @extend_schema(operation_id="rule_sets_retrieve", tags=TAG, responses={200: RuleSetOut, **errors(401, 403, 404)})
    def get(self, request, slug):
        return Response(RuleSetOut(services.rule_set_get(org=request.org, slug=slug)).data)

    @extend_schema(operation_id="rule_sets_update", tags=TAG, request=RuleSetPatchIn, responses={200: RuleSetOut, **errors(400, 401, 403, 404, s403="System rule sets are read-only, or the key's scope does not allow this route.")})
    def patch(self, request, slug):
        data = self.validated(RuleSetPatchIn, request.data, partial=True)
        return Response(RuleSetOut(services.rule_set_update(org=request.org, slug=slug, **data, **_actor(request))).data)

    @extend_schema(operation_id="rule_sets_deactivate", tags=TAG, request=None, responses={200: RuleSetDeletedOut, **errors(401, 403, 404, s403="System rule sets are read-only, or the key's scope does not allow this route.")})
    def delete(self, request, slug):
        return Response(services.rule_set_deactivate(org=request.org, slug=slug, **_actor(request)))


class LanguagesView(ApiView):
    """Input languages (any) and, per tested language, how many held-out checks ran and how many
    matched the expected action; the figures come from running the service on its held-out corpus."""

    auth = "none"

    @extend_schema(operation_id="languages_list", tags=TAG, responses={200: LanguagesOut})
    def get(self, request):
        return Response(languages.languages_report())


class FeedbackView(ApiView):
    """Tell us about the service or one evaluation (a wrong verdict, a missed language)."""

    auth = "optional"
    scope = "evaluate"

    @extend_schema(operation_id="feedback_info", tags=TAG, responses={200: FeedbackInfoOut})
    def get(self, request):
        return Response({
            "route": "/api/v1/feedback",
            "method": "POST",
            "description": "Send a message about the service or an evaluation; a key is optional.",
            "limits": {
                "message": 2000, "about": 300, "evaluation_id": 64, "request_id": 64, "contact": 200,
                "per_address_per_day": settings.GUARDRAILS_FEEDBACK_DAILY,
            },
        })

    @extend_schema(operation_id="feedback_create", tags=TAG, request=FeedbackIn, responses={201: FeedbackOut, **errors(400, 429, s429="The daily feedback allowance of this address is used.")})
    def post(self, request):
        data = self.validated(FeedbackIn, request.data)
        throttle(request, group="guardrails-feedback", rate=f"{settings.GUARDRAILS_FEEDBACK_DAILY}/d",
                 message="This address has sent its feedback allowance for today; try again tomorrow.")
        feedback = services.feedback_create(org=request.org, ip=client_ip(request), **data)
        return Response({"received": True, "id": feedback.id}, status=201)


