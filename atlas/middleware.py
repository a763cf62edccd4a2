"""Sightings: a request to this service whose User-Agent claims a registry agent is counted (agent, day)."""

import logging

from core.net import client_ip

log = logging.getLogger(__name__)

_SKIPPED_PREFIXES = ("/static/", "/admin/")


class SightingMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        user_agent = request.META.get("HTTP_USER_AGENT", "")
        if user_agent and not request.path.startswith(_SKIPPED_PREFIXES):
            from atlas.services import sighting_record

            try:
                sighting_record(user_agent=user_agent, ip=client_ip(request), headers=dict(request.headers),
                                method=request.method, url=request.build_absolute_uri())
            except Exception:  # noqa: BLE001 - counting must never fail or slow a request's answer
                log.info("atlas sighting not recorded", exc_info=True)
        return response
