from django.apps import AppConfig


class PreflightConfig(AppConfig):
    name = "preflight"
