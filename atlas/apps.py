from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _seed_registry(sender, using="default", **kwargs):
    """After migrate (and after a test database flush), an empty registry is seeded from the bundled files."""
    from atlas.services import registry_seed_if_empty

    if using == "default":
        registry_seed_if_empty()


class AtlasConfig(AppConfig):
    name = "atlas"

    def ready(self):
        post_migrate.connect(_seed_registry, sender=self, dispatch_uid="atlas-seed-registry")
