"""Bearer authentication with organization keys (`svc_live_…`)."""

from dataclasses import dataclass
from datetime import timedelta

from django.core.cache import cache
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed

from accounts.keys import ORG_KEY_PREFIX, hashes_equal, key_hash
from accounts.models import ApiKey
from core import clock
from core.net import client_ip

LAST_USED_RESOLUTION = timedelta(minutes=1)


@dataclass(frozen=True)
class KeyPrincipal:
    """Who is calling: the organization behind an API key."""

    key: ApiKey

    is_authenticated = True
    is_anonymous = False

    @property
    def org(self):
        return self.key.org


class ApiKeyAuthentication(BaseAuthentication):
    """`Authorization: Bearer svc_live_…`. No header: anonymous. A bad, unknown or revoked key: 401."""

    def authenticate(self, request):
        header = get_authorization_header(request)
        if not header:
            return None
        try:
            scheme, _, token = header.decode("latin-1").partition(" ")
        except UnicodeDecodeError:
            raise AuthenticationFailed() from None
        token = token.strip()
        if scheme.lower() != "bearer" or not token.startswith(ORG_KEY_PREFIX) or len(token) > 200:
            raise AuthenticationFailed()
        digest = key_hash(token)
        key = ApiKey.objects.select_related("org").filter(key_hash=digest).first()
        if key is None or not hashes_equal(key.key_hash, digest):
            raise AuthenticationFailed()
        if not key.is_active:
            self._record_rejected(request, key)
            raise AuthenticationFailed()
        now = clock.now()
        if key.last_used_at is None or key.last_used_at < now - LAST_USED_RESOLUTION:
            ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
        return KeyPrincipal(key), key

    def authenticate_header(self, request):
        return 'Bearer realm="api"'

    @staticmethod
    def _record_rejected(request, key: ApiKey) -> None:
        """Audit a revoked key's use, at most once a minute per key and address."""
        from accounts.services import audit_record

        ip = client_ip(request)
        if cache.add(f"audit:rejected:{key.pk}:{ip}", 1, timeout=60):
            audit_record(org=key.org, action="accounts.key.rejected", actor=key.prefix, target=str(key.pk),
                         data={"reason": "revoked", "path": request.path[:200]}, ip=ip)
