"""Sightings: a request to this service whose User-Agent claims a registry agent is counted (agent, day)."""

import logging

from django.db import DatabaseError

from core.net import client_ip

log = logging.getLogger(__name__)


class SightingMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        user_agent = request.META.get("HTTP_USER_AGENT", "")
        if user_agent:
            from atlas.services import sighting_record

            try:
                sighting_record(user_agent=user_agent, ip=client_ip(request))
            except DatabaseError:  # counting must never fail a request
                log.warning("atlas sighting not recorded", exc_info=True)
        return response
