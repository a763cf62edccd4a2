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
        from django.db.models.signals import post_delete, post_save

        from atlas.models import Agent, IpRangeList
        from atlas.registry import registry_touched

        post_migrate.connect(_seed_registry, sender=self, dispatch_uid="atlas-seed-registry")
        for model in (Agent, IpRangeList):
            post_save.connect(registry_touched, sender=model, dispatch_uid=f"atlas-touched-save-{model.__name__}")
            post_delete.connect(registry_touched, sender=model, dispatch_uid=f"atlas-touched-delete-{model.__name__}")
