"""The base of every metered route: declare the meter and units, the mechanism takes them.

    class EvaluationCreateView(MeteredView):
        auth = "optional"
        scope = "evaluate"
        meter = "evaluations"     # or "atlas_lookups"
        product = "guardrails"    # the line it is counted on in /usage
        quota_units = 1           # or override metered_units() (a batch takes its size up front)
"""

from billing import metering
from core.api import ApiView
from core.net import client_ip


class MeteredView(ApiView):
    meter: str = "evaluations"
    product: str = ""
    quota_units = 1

    def metered_units(self, request) -> int:
        return self.quota_units

    def initial(self, request, *args, **kwargs):
        request.reservation = None
        super().initial(request, *args, **kwargs)
        request.keyless = request.org is None
        units = self.metered_units(request)
        if units > 0:
            request.reservation = metering.reserve(
                meter_name=self.meter, org=request.org, client_address=client_ip(request), units=units
            )

    def finalize_response(self, request, response, *args, **kwargs):
        reservation = getattr(request, "reservation", None)
        if reservation is not None:
            request.reservation = None
            succeeded = response.status_code < 400
            metering.settle(reservation, product=self.product or self.meter, succeeded=succeeded)
            if succeeded:
                for name, value in reservation.headers.items():
                    response[name] = value
        return super().finalize_response(request, response, *args, **kwargs)

    def dispatch(self, request, *args, **kwargs):
        try:
            return super().dispatch(request, *args, **kwargs)
        finally:
            reservation = getattr(getattr(self, "request", None), "reservation", None)
            if reservation is not None:  # the handler crashed: nothing is charged
                metering.settle(reservation, product=self.product or self.meter, succeeded=False)
