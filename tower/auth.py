"""Agent keys (`svc_agent_…`) on Tower's routes.

`AgentKeyAuthentication` answers for a bearer token that starts with `svc_agent_` and leaves any
other to the next class (the organization key's), so a Tower route lists both and a caller of
either kind is known. An unknown or revoked agent key is 401 at once: the agent row is read on
every request, never cached.
"""

from dataclasses import dataclass
from datetime import timedelta

from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed

from accounts.keys import hashes_equal, key_hash
from core import clock
from tower.constants import AGENT_KEY_PREFIX
from tower.models import Agent

LAST_USED_RESOLUTION = timedelta(minutes=1)


@dataclass(frozen=True)
class AgentCredential:
    """`request.auth` for an agent: what core.api.ApiView reads of a key (org, scope, prefix), and the agent."""

    agent: Agent
    scope = "full"  # an agent is limited by its operation scopes, not by the organization key's scopes

    @property
    def org(self):
        return self.agent.org

    @property
    def prefix(self) -> str:
        return self.agent.prefix


@dataclass(frozen=True)
class AgentPrincipal:
    agent: Agent
    is_authenticated = True
    is_anonymous = False


def _token(request) -> str | None:
    header = get_authorization_header(request)
    if not header:
        return None
    try:
        scheme, _, token = header.decode("latin-1").partition(" ")
    except UnicodeDecodeError:
        return None
    token = token.strip()
    if scheme.lower() != "bearer" or not token.startswith(AGENT_KEY_PREFIX):
        return None
    return token


class AgentKeyAuthentication(BaseAuthentication):
    """`Authorization: Bearer svc_agent_…`; other tokens are left to the organization key's class."""

    def authenticate(self, request):
        token = _token(request)
        if token is None:
            return None
        if len(token) > 200:
            raise AuthenticationFailed()
        digest = key_hash(token)
        agent = Agent.objects.select_related("org").filter(key_hash=digest).first()
        if agent is None or not hashes_equal(agent.key_hash, digest) or not agent.is_active:
            raise AuthenticationFailed()
        now = clock.now()
        if agent.last_used_at is None or agent.last_used_at < now - LAST_USED_RESOLUTION:
            Agent.objects.filter(pk=agent.pk).update(last_used_at=now)
        return AgentPrincipal(agent), AgentCredential(agent)

    def authenticate_header(self, request):
        return 'Bearer realm="api"'
