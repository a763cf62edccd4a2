"""The caller behind an Authorization header, decided by the REST API's own authentication classes."""

from dataclasses import dataclass

from rest_framework.exceptions import AuthenticationFailed

from accounts.auth import ApiKeyAuthentication
from core.errors import Unauthorized
from tower.auth import AgentKeyAuthentication

# The same classes, in the same order, as Tower's routes: agent keys first, then organization keys.
AUTHENTICATORS = (AgentKeyAuthentication, ApiKeyAuthentication)


@dataclass
class _HeaderRequest:
    """What the authentication classes read of a request: its headers, META and path (for the audit of a revoked key)."""

    META: dict
    path: str
    headers: dict


def principal_from_authorization(authorization: str | None, *, meta: dict | None = None, path: str = "") -> tuple:
    """(org, key) for a bearer key, (None, None) without a header; Unauthorized for a bad, unknown or revoked key.

    `key` is an accounts ApiKey, or Tower's AgentCredential for a `svc_agent_` key; `meta` carries the client's
    address (REMOTE_ADDR, HTTP_X_FORWARDED_FOR) for the audit of a revoked key."""
    if not authorization:
        return None, None
    request = _HeaderRequest(META={**(meta or {}), "HTTP_AUTHORIZATION": authorization}, path=path,
                             headers={"authorization": authorization})
    try:
        for authenticator in AUTHENTICATORS:
            found = authenticator().authenticate(request)
            if found is not None:
                _principal, key = found
                return key.org, key
    except AuthenticationFailed:
        raise Unauthorized() from None
    raise Unauthorized()
