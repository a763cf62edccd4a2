from django.apps import AppConfig


class BeaconConfig(AppConfig):
    name = "beacon"

    def ready(self):
        from billing.signals import payment_succeeded

        from .services import on_payment_succeeded

        payment_succeeded.connect(on_payment_succeeded, dispatch_uid="beacon.card_payment")
