"""Billing routes that need no payment processor."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from billing import services
from billing.serializers import CatalogOut, UsageOut, UsageQueryIn
from core.api import ApiView
from core.schema import errors


class PlanListView(ApiView):
    """The plan catalog: evaluation plans, Atlas tiers, credit packs and the keyless limits."""

    auth = "none"

    @extend_schema(tags=["Billing"], responses={200: CatalogOut})
    def get(self, request):
        return Response(services.plans_catalog())


class UsageView(ApiView):
    """Daily usage per product, today's remaining quota per meter, and the credit balance."""

    scope = "evaluate"

    @extend_schema(tags=["Account"], parameters=[UsageQueryIn], responses={200: UsageOut, **errors(400, 401)})
    def get(self, request):
        query = self.validated(UsageQueryIn, request.query_params)
        return Response(services.usage_summary(org=request.org, days=query["days"]))
