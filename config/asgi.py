"""ASGI entry point (uvicorn config.asgi:application): Django behind the MCP, A2A and discovery routes.

The layout is in surfaces/asgi.py; Django's application is built first, so that settings and apps are
ready before the surfaces import models.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_application = get_asgi_application()

from surfaces.asgi import application_create  # noqa: E402

application = application_create(django_application)
