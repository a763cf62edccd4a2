"""x402 v2 pay-per-use: the small Django adapter the official `x402` package lacks.

A paid route is a view that declares its price and says how to validate a request and how to answer it:

    class EvaluateX402View(X402View):
        price = "$0.002"
        description = "Guardrails evaluation"

        def check(self, request):            # 400 here, before anyone is asked to pay
            return self.validated(EvaluateIn, request.data)

        def paid(self, request, data):       # runs only once the payment is verified
            return Response(services.evaluation_create(org=None, **data))

What happens on each request (the SDK's x402HTTPResourceServerSync does the protocol work):

1. `check()` validates the request: bad input is a 400 and nobody pays for it.
2. Without a `PAYMENT-SIGNATURE` header the answer is 402: the `PAYMENT-REQUIRED` header holds the
   base64 JSON `PaymentRequired` (x402Version 2, `accepts` with scheme `exact`, network `eip155:8453`,
   USDC amount in atomic units, payTo), and the body is the same object with `error` (our envelope).
3. With one, the facilitator verifies it (EIP-712 signature, amount, payTo, network, time window). The
   authorization (payer, EIP-3009 nonce) is claimed in X402Payment: a second use is refused with 402.
4. `paid()` runs. A response of 400 or more is returned as it is and is never settled (the claim is
   released, so the same authorization may pay for a corrected retry).
5. Otherwise the payment is settled before the body leaves: settled, the body goes out with the
   `PAYMENT-RESPONSE` header; refused, the caller gets 402 and never the paid body.

x402 calls carry no key, so they are outside the keyed daily quotas; each one is paid for.

The facilitator (FacilitatorClient) is reached through core.safe_http, like every other outbound call.
`/supported` is not fetched at start-up: the kind we accept (exact on X402_NETWORK) is configured.
"""

from __future__ import annotations

import base64
import functools
import json
import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils.module_loading import import_string
from rest_framework.response import Response
from x402 import x402ResourceServerSync
from x402.http import x402HTTPResourceServerSync
from x402.http.facilitator_client_base import HTTPFacilitatorClientBase
from x402.http.types import HTTPRequestContext, PaymentOption, RouteConfig
from x402.http.utils import decode_payment_signature_header
from x402.mechanisms.evm.exact import ExactEvmServerScheme
from x402.schemas import SettleResponse, SupportedKind, SupportedResponse, VerifyResponse

from billing.models import X402Payment
from core import clock, safe_http
from core.api import ApiView
from core.errors import ApiError, BadGateway, PaymentRequired, ServiceUnavailable

log = logging.getLogger(__name__)

X402_VERSION = 2
SCHEME = "exact"
EXPOSED_HEADERS = "PAYMENT-REQUIRED, PAYMENT-RESPONSE"


class FacilitatorError(Exception):
    """The facilitator could not be reached or answered something that is not the protocol."""


class FacilitatorClient(HTTPFacilitatorClientBase):
    """The SDK's FacilitatorClientSync protocol (verify, settle, get_supported) over core.safe_http.

    The SDK's own HTTP client uses httpx straight to the URL; this one goes through safe_http (public
    addresses only, time and size caps), sends the configured credentials, and parses the answers with
    the SDK's own models.
    """

    def __init__(self, *, url: str, network: str, token: str = "", headers_provider: str = "", timeout: float = 60):
        super().__init__({"url": url})
        self.network = network
        self.token = token
        self.headers_provider = import_string(headers_provider) if headers_provider else None
        self.timeout = timeout

    def _headers(self, operation: str) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.headers_provider is not None:
            headers.update((self.headers_provider() or {}).get(operation, {}))
        return headers

    def _post(self, operation: str, payload, requirements, model):
        body = self._build_request_body(
            payload.x402_version,
            payload.model_dump(by_alias=True, exclude_none=True),
            requirements.model_dump(by_alias=True, exclude_none=True),
        )
        try:
            response = safe_http.fetch(
                f"{self.url}/{operation}", method="POST", json=body, headers=self._headers(operation),
                timeout=self.timeout, deadline=self.timeout, allow_redirects=False,
            )
        except safe_http.SafeHttpError as exc:
            raise FacilitatorError(f"The payment facilitator could not be reached: {exc.message}") from exc
        try:
            data = response.json()
        except ValueError:
            data = None
        if response.status != 200 and not (isinstance(data, dict) and ("isValid" in data or "success" in data)):
            raise FacilitatorError(f"The payment facilitator answered {operation} with HTTP {response.status}.")
        try:
            return model.model_validate(data)
        except (ValueError, TypeError) as exc:
            raise FacilitatorError(f"The payment facilitator's {operation} answer is not the x402 format.") from exc

    def verify(self, payload, requirements) -> VerifyResponse:
        return self._post("verify", payload, requirements, VerifyResponse)

    def settle(self, payload, requirements) -> SettleResponse:
        return self._post("settle", payload, requirements, SettleResponse)

    def get_supported(self) -> SupportedResponse:
        return SupportedResponse(kinds=[SupportedKind(x402_version=X402_VERSION, scheme=SCHEME, network=self.network)],
                                 extensions=[], signers={})


@dataclass(frozen=True)
class _Config:
    pay_to: str
    network: str
    facilitator_url: str
    token: str
    headers_provider: str
    timeout: int


def _config() -> _Config:
    return _Config(settings.X402_PAY_TO, settings.X402_NETWORK, settings.X402_FACILITATOR_URL.rstrip("/"),
                   settings.X402_FACILITATOR_TOKEN, settings.X402_FACILITATOR_HEADERS, settings.X402_FACILITATOR_SECONDS)


def facilitator_for(config: _Config):
    """The facilitator client for a configuration (tests may replace this function)."""
    return FacilitatorClient(url=config.facilitator_url, network=config.network, token=config.token,
                             headers_provider=config.headers_provider, timeout=config.timeout)


@functools.lru_cache(maxsize=16)
def _resource_server(config: _Config) -> x402ResourceServerSync:
    server = x402ResourceServerSync(facilitator_for(config))
    server.register(config.network, ExactEvmServerScheme())
    server.initialize()
    return server


@functools.lru_cache(maxsize=256)
def _http_server(config: _Config, route: str, price: str, description: str, mime_type: str, timeout: int):
    option = PaymentOption(scheme=SCHEME, pay_to=config.pay_to, price=price, network=config.network, max_timeout_seconds=timeout)
    server = x402HTTPResourceServerSync(_resource_server(config), {route: RouteConfig(accepts=option, description=description, mime_type=mime_type)})
    server.initialize()
    return server


class _DjangoAdapter:
    """x402.http.types.HTTPAdapter over a DRF request."""

    def __init__(self, request, *, unpaid: bool = False):
        self.request = request
        self.unpaid = unpaid  # read as if no payment were attached: for a fresh PAYMENT-REQUIRED

    def get_header(self, name: str) -> str | None:
        if self.unpaid and name.lower() in ("payment-signature", "x-payment"):
            return None
        return self.request.headers.get(name)

    def get_method(self) -> str:
        return self.request.method

    def get_path(self) -> str:
        return self.request.path

    def get_url(self) -> str:
        return self.request.build_absolute_uri()

    def get_accept_header(self) -> str:
        return "application/json"  # an API: never the SDK's HTML paywall

    def get_user_agent(self) -> str:
        return self.request.headers.get("User-Agent", "")

    def get_query_params(self) -> dict[str, Any]:
        return {key: (values if len(values) > 1 else values[0]) for key, values in self.request.query_params.lists()}

    def get_query_param(self, name: str) -> str | None:
        return self.request.query_params.get(name)

    def get_body(self) -> Any:
        return None  # the body was validated by check(); the SDK does not need it


def _decoded(header_value: str | None) -> dict:
    if not header_value:
        return {}
    try:
        return json.loads(base64.b64decode(header_value))
    except (ValueError, TypeError):
        return {}


class X402PaymentRequired(PaymentRequired):
    """402 with the x402 PaymentRequired object in the body (plus `error`) and in PAYMENT-REQUIRED."""

    def __init__(self, message: str, headers: dict[str, str]):
        required = _decoded(headers.get("PAYMENT-REQUIRED"))
        extra = {key: required[key] for key in ("x402Version", "resource", "accepts") if key in required}
        headers = {name: value for name, value in headers.items() if name.lower() != "content-type"}
        headers["Access-Control-Expose-Headers"] = EXPOSED_HEADERS
        super().__init__(message.rstrip(".") + ".", extra=extra, headers=headers)


_REASONS = {
    "invalid_exact_evm_payload_authorization_value_mismatch": "The payment authorization is not for this route's price.",
    "invalid_exact_evm_payload_signature": "The payment signature does not match the authorization.",
    "invalid_exact_evm_payload_authorization_valid_before": "The payment authorization has expired; sign a new one.",
    "invalid_exact_evm_payload_authorization_valid_after": "The payment authorization is not valid yet.",
    "invalid_network": "The payment is for another network; pay on the network in PAYMENT-REQUIRED.",
    "invalid_scheme": "The payment uses another scheme; use the scheme in PAYMENT-REQUIRED.",
    "insufficient_funds": "The payer's balance does not cover the price.",
}


def _message(reason: str | None) -> str:
    if reason == "Payment required":
        return "The PAYMENT-SIGNATURE header is not a base64 JSON x402 v2 PaymentPayload."
    if reason == "No matching payment requirements":
        return "The payment does not match this route's requirements (scheme, network, asset, amount or payTo); pay one of PAYMENT-REQUIRED's."
    if not reason:
        return "Payment required: sign one of the requirements in PAYMENT-REQUIRED and send it as PAYMENT-SIGNATURE."
    return _REASONS.get(reason, f"The payment was refused: {reason}.")


REUSED = "This payment authorization was already used; sign a new one."


def _authorization_key(payload, network: str, asset: str) -> dict:
    authorization = (payload.payload or {}).get("authorization") or {}
    return {"network": network, "asset": asset.lower(), "payer": str(authorization.get("from") or "").lower(),
            "nonce": str(authorization.get("nonce") or "").lower()}


def _already_used(header: str) -> bool:
    """Whether the presented authorization is in flight or settled here (checked before the facilitator is asked)."""
    try:
        payload = decode_payment_signature_header(header)
        accepted = payload.accepted
    except Exception:  # noqa: BLE001 - an undecodable header is the SDK's to refuse
        return False
    key = _authorization_key(payload, accepted.network, accepted.asset)
    return X402Payment.objects.filter(status__in=[X402Payment.PENDING, X402Payment.SETTLED], **key).exists()


def _claim(payload, requirements, route: str, payer: str) -> X402Payment | None:
    """Take the authorization for this request; None when it is in use or already settled."""
    fields = _authorization_key(payload, requirements.network, requirements.asset)
    fields["payer"] = fields["payer"] or payer.lower()
    try:
        with transaction.atomic():
            return X402Payment.objects.create(route=route, amount=requirements.amount, pay_to=requirements.pay_to, **fields)
    except IntegrityError:
        pass
    reclaimed = X402Payment.objects.filter(status=X402Payment.RELEASED, **fields).update(
        status=X402Payment.PENDING, route=route, amount=requirements.amount, error="", response_status=None
    )
    return X402Payment.objects.get(**fields) if reclaimed else None


class X402View(ApiView):
    """The base of every /api/x402/ route: declare `price` (USD, e.g. "$0.01") and `description`,
    implement `check()` (validate; raise for a 400) and `paid()` (answer; the service call)."""

    auth = "none"
    scope = "evaluate"
    price: str = ""
    description: str = ""
    mime_type: str = "application/json"
    max_timeout_seconds: int = 120

    def check(self, request) -> Any:
        return None

    def paid(self, request, data) -> Response:
        raise NotImplementedError

    def get(self, request, *args, **kwargs):
        return self._pay_then_answer(request)

    def post(self, request, *args, **kwargs):
        return self._pay_then_answer(request)

    def _pay_then_answer(self, request):
        data = self.check(request)
        if not settings.X402_ENABLED:
            raise ServiceUnavailable("x402 pay-per-use is not enabled on this service.")
        config = _config()
        route = f"{request.method} {request.path}"
        try:
            server = _http_server(config, route, self.price, self.description, self.mime_type, self.max_timeout_seconds)
        except Exception as exc:  # noqa: BLE001 - a misconfiguration is logged and reported, never a 500
            log.exception("x402 could not be configured for %s", route)
            raise ServiceUnavailable("x402 pay-per-use is misconfigured on this service.") from exc
        adapter = _DjangoAdapter(request)
        header = request.headers.get("PAYMENT-SIGNATURE") or request.headers.get("X-PAYMENT")
        context = HTTPRequestContext(adapter=adapter, path=request.path, method=request.method, payment_header=header)
        if header and _already_used(header):
            raise X402PaymentRequired(REUSED, self._requirements(server, request))
        try:
            result = server.process_http_request(context, None)
        except FacilitatorError as exc:
            raise BadGateway(str(exc)) from exc
        if result.type == "payment-error":
            if result.response is None or result.response.status != 402:
                raise ServiceUnavailable("x402 pay-per-use could not build its payment requirements.")
            reason = _decoded(result.response.headers.get("PAYMENT-REQUIRED")).get("error") if header else None
            raise X402PaymentRequired(_message(reason), result.response.headers)
        if result.type != "payment-verified":  # the route is always protected; be safe
            raise ServiceUnavailable("x402 pay-per-use is misconfigured on this service.")
        payload, requirements = result.payment_payload, result.payment_requirements
        claim = _claim(payload, requirements, route, "")
        if claim is None:
            raise X402PaymentRequired(REUSED, self._requirements(server, request))
        try:
            response = self.paid(request, data)
        except BaseException as exc:
            status = exc.status if isinstance(exc, ApiError) else 500
            X402Payment.objects.filter(pk=claim.pk).update(status=X402Payment.RELEASED, response_status=status, error=str(exc)[:300])
            raise
        if response.status_code >= 400:
            X402Payment.objects.filter(pk=claim.pk).update(status=X402Payment.RELEASED, response_status=response.status_code)
            return response
        return self._settle(server, context, payload, requirements, claim, response)

    @staticmethod
    def _requirements(server, request) -> dict:
        """The PAYMENT-REQUIRED headers of an unpaid call to this route."""
        unpaid = HTTPRequestContext(adapter=_DjangoAdapter(request, unpaid=True), path=request.path, method=request.method)
        return server.process_http_request(unpaid, None).response.headers

    def _settle(self, server, context, payload, requirements, claim, response):
        try:
            settled = server.process_settlement(payload, requirements, context=context)
        except FacilitatorError as exc:
            settled = None
            error = str(exc)
        if settled is None or not settled.success:
            error = settled.error_reason if settled is not None else error
            X402Payment.objects.filter(pk=claim.pk).update(status=X402Payment.FAILED, response_status=402, error=(error or "")[:300])
            headers = dict(settled.response.headers) if settled is not None and settled.response is not None else {}
            exc = PaymentRequired(f"The payment could not be settled ({error or 'unknown reason'}); nothing was charged.".replace("..", "."))
            exc.headers.update({k: v for k, v in headers.items() if k.lower() != "content-type"})
            exc.headers["Access-Control-Expose-Headers"] = EXPOSED_HEADERS
            raise exc
        X402Payment.objects.filter(pk=claim.pk).update(
            status=X402Payment.SETTLED, transaction=settled.transaction or "", payer=(settled.payer or claim.payer).lower(),
            response_status=response.status_code, settled_at=clock.now(),
        )
        for name, value in settled.headers.items():
            response[name] = value
        response["Access-Control-Expose-Headers"] = EXPOSED_HEADERS
        return response
