"""The base of every API view: a view declares its policy, this class enforces it.

    class EvaluationCreateView(ApiView):
        auth = "optional"      # "required" (a key), "optional" (keyless allowed), "none" (key ignored)
        scope = "evaluate"     # "evaluate" routes accept evaluate and full keys; "full" needs full
        idempotent = True      # honours Idempotency-Key
"""

from rest_framework.response import Response
from rest_framework.views import APIView

from core import idempotency
from core.errors import Forbidden, Unauthorized
from core.net import client_ip

_STORED_HEADER_PREFIXES = ("x-ratelimit-", "x-burst-", "x-credits-", "x-quota-", "location")


class _ReplayResponse(Exception):
    def __init__(self, replay: idempotency.Replay):
        self.replay = replay


class ApiView(APIView):
    auth = "required"
    scope = "full"
    idempotent = False

    def get_authenticators(self):
        if self.auth == "none":
            return []
        return super().get_authenticators()

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        key = request.auth if self.auth != "none" else None
        if self.auth == "required" and key is None:
            raise Unauthorized()
        if key is not None and self.scope == "full" and key.scope != "full":
            raise Forbidden(f"A key with scope '{key.scope}' cannot use this route; it needs a key with scope 'full'.")
        request.org = key.org if key is not None else None
        request.api_key = key
        request.idempotency_lease = None
        if self.idempotent:
            self._idempotency_begin(request)

    # Idempotency-Key: claim before the handler runs, store or release after.

    def idempotency_scope(self, request) -> str:
        return f"org:{request.org.pk}" if request.org is not None else f"ip:{client_ip(request)}"

    def _idempotency_begin(self, request) -> None:
        key = request.headers.get("Idempotency-Key")
        if key is None:
            return
        idempotency.idempotency_key_check(key)
        fingerprint = idempotency.request_fingerprint(request.method, request.path, request.data)
        outcome = idempotency.idempotency_begin(scope=self.idempotency_scope(request), key=key, fingerprint=fingerprint)
        if isinstance(outcome, idempotency.Replay):
            raise _ReplayResponse(outcome)
        request.idempotency_lease = outcome

    def handle_exception(self, exc):
        if isinstance(exc, _ReplayResponse):
            replay = exc.replay
            response = Response(replay.body, status=replay.status_code, headers=replay.headers)
            response[idempotency.REPLAY_HEADER] = "true"
            return response
        return super().handle_exception(exc)

    def finalize_response(self, request, response, *args, **kwargs):
        lease = getattr(request, "idempotency_lease", None)
        if lease is not None:
            request.idempotency_lease = None
            if response.status_code < 400:
                headers = {k: v for k, v in response.items() if k.lower().startswith(_STORED_HEADER_PREFIXES)}
                idempotency.idempotency_finish(lease, status_code=response.status_code, body=response.data, headers=headers)
            else:
                idempotency.idempotency_release(lease)
        return super().finalize_response(request, response, *args, **kwargs)

    def dispatch(self, request, *args, **kwargs):
        try:
            return super().dispatch(request, *args, **kwargs)
        finally:
            lease = getattr(getattr(self, "request", None), "idempotency_lease", None)
            if lease is not None:  # the handler crashed: free the key for a retry
                idempotency.idempotency_release(lease)

    # Helpers for subclasses.

    def validated(self, serializer_class, data, **kwargs) -> dict:
        serializer = serializer_class(data=data, **kwargs)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data
