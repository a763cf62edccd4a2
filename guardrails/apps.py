from django.apps import AppConfig


class GuardrailsConfig(AppConfig):
    name = "guardrails"

    def ready(self):
        from accounts import retention

        retention.register("guardrails.Evaluation")
