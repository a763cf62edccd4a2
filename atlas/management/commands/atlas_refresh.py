"""manage.py atlas_refresh [--fetch]: reload the registry seed; with --fetch, the operators' IP lists too."""

from django.core.management.base import BaseCommand

from atlas.services import registry_refresh


class Command(BaseCommand):
    help = "Reload the Atlas registry from the bundled openly licensed seed; --fetch also fetches the operators' IP lists."

    def add_arguments(self, parser):
        parser.add_argument("--fetch", action="store_true", help="Fetch each published IP list from its operator.")

    def handle(self, *args, fetch=False, **options):
        result = registry_refresh(fetch=fetch)
        self.stdout.write(", ".join(f"{key}={value}" for key, value in result.items()))
