from django.apps import AppConfig


class BeaconConfig(AppConfig):
    name = "beacon"
