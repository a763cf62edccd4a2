from django.apps import AppConfig


class GuardrailsConfig(AppConfig):
    name = "guardrails"
