"""How drf-spectacular documents the agent key."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class AgentKeyScheme(OpenApiAuthenticationExtension):
    target_class = "tower.auth.AgentKeyAuthentication"
    name = "AgentKey"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": (
                "A Tower agent key, `svc_agent_…`, from POST /api/v1/tower/agents (shown once). Send "
                "`Authorization: Bearer <AGENT_KEY>`. Limited to the agent's scopes; fails at once when the agent is revoked."
            ),
        }
