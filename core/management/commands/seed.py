"""Load the seed data every app needs on a fresh install (idempotent)."""

from django.apps import apps
from django.core.management.base import BaseCommand

from core.signing import signing_key


class Command(BaseCommand):
    help = "Load seed data (safe to run again): each app's seed() in its seed.py, if it has one, and the signing key."

    def handle(self, *args, **options):
        key = signing_key()
        self.stdout.write(f"signing key {key.key_id}")
        for config in apps.get_app_configs():
            try:
                module = __import__(f"{config.name}.seed", fromlist=["seed"])
            except ModuleNotFoundError as exc:
                if exc.name != f"{config.name}.seed":
                    raise
                continue
            seed = getattr(module, "seed", None)
            if not callable(seed):
                continue  # a data module of the app (Atlas seeds its registry on migrate), not a hook
            self.stdout.write(f"{config.name}: {seed()}")
