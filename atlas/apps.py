from django.apps import AppConfig


class AtlasConfig(AppConfig):
    name = "atlas"
