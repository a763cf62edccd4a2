from django.apps import AppConfig


class TowerConfig(AppConfig):
    name = "tower"

    def ready(self):
        from tower import schema, template  # noqa: F401 - the starter workflow's operation; the agent key scheme
