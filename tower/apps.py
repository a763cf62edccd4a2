from django.apps import AppConfig


class TowerConfig(AppConfig):
    name = "tower"
