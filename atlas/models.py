"""Atlas: the registry, published IP lists, key directories, registrations, sightings, reports and datasets."""

from django.db import models

from atlas import constants

PURPOSE_CHOICES = list(constants.PURPOSES.items())
VERIFICATION_CHOICES = list(constants.VERIFICATION.items())
KIND_CHOICES = [(kind, kind) for kind in constants.KINDS]


class Agent(models.Model):
    """A registry entry: an AI crawler, fetcher or agent, what it claims in its User-Agent, and how to verify it.

    `sources` records where each fact came from (seed file, registration, operator edit). An entry an
    operator edited in the admin is `locked`: the seed refresh leaves it as it is.
    """

    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=120)
    operator = models.CharField(max_length=200, blank=True)
    operator_url = models.URLField(max_length=500, blank=True)
    purpose = models.CharField(max_length=20, choices=PURPOSE_CHOICES, default="other")
    kind = models.CharField(max_length=20, choices=KIND_CHOICES, default="crawler")
    user_agents = models.TextField(blank=True, help_text="A representative User-Agent string.")
    user_agent_tokens = models.JSONField(default=list, blank=True, help_text="Product tokens the User-Agent carries.")
    robots_txt_token = models.CharField(max_length=120, blank=True)
    web_bot_auth_key_directory = models.URLField(max_length=500, blank=True)
    verification = models.CharField(max_length=20, choices=VERIFICATION_CHOICES, default="user_agent_only")
    ip_lists = models.JSONField(default=list, blank=True, help_text="Ids of the published IP lists that cover it.")
    rdns_suffixes = models.JSONField(default=list, blank=True, help_text="Reverse-DNS suffixes for FCrDNS.")
    follows_robots_txt = models.BooleanField(null=True, blank=True, help_text="From a third-party classification.")
    respects_robots_txt = models.BooleanField(null=True, blank=True, help_text="From the ai.robots.txt list; null where unclear.")
    robots_txt_classification = models.CharField(max_length=40, blank=True)
    description = models.TextField(blank=True)
    docs_url = models.URLField(max_length=500, blank=True)
    examples = models.JSONField(default=list, blank=True, help_text="Observed User-Agent strings (curated field).")
    curated_notes = models.TextField(blank=True, help_text="Operators' notes (curated field, paid tiers).")
    sources = models.JSONField(default=list, blank=True)
    registration = models.OneToOneField("atlas.Registration", null=True, blank=True, on_delete=models.CASCADE,
                                        related_name="entry")
    locked = models.BooleanField(default=False, help_text="Edited by an operator: the seed refresh leaves it alone.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Finding(models.Model):
    """An operator finding (OSINT) about a registry entry, recorded in the admin; paid tiers read it."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="findings")
    title = models.CharField(max_length=200)
    detail = models.TextField(blank=True)
    source_url = models.URLField(max_length=500, blank=True)
    observed_on = models.DateField(null=True, blank=True)
    recorded_by = models.CharField(max_length=120, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.title


class IpRangeList(models.Model):
    """An operator's published IP list, as last loaded: its upstream URL, its own date and its prefixes."""

    id = models.SlugField(max_length=80, primary_key=True)
    operator = models.CharField(max_length=120)
    label = models.CharField(max_length=120)
    upstream_url = models.URLField(max_length=500)
    covers = models.JSONField(default=list, help_text="Slugs of the registry entries it covers.")
    prefixes = models.JSONField(default=list)
    creation_time = models.CharField(max_length=64, blank=True, help_text="The list's own date (creationTime).")
    fetched_at = models.DateTimeField(null=True, blank=True)
    origin = models.CharField(max_length=40, default="seed", help_text="seed (bundled CC0 copy) or fetched.")
    last_error = models.CharField(max_length=300, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.id


class KeyDirectory(models.Model):
    """A Web Bot Auth key directory as last fetched; a failed fetch never evicts the keys."""

    url = models.URLField(max_length=500, unique=True)
    keys = models.JSONField(default=list, help_text="[{thumbprint, jwk}] of the accepted keys.")
    fetched_at = models.DateTimeField(null=True, blank=True)
    fresh_until = models.DateTimeField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return self.url


class Registration(models.Model):
    """An operator's self-registration of its own agent, proven by control of its domain."""

    PENDING_VERIFICATION = "pending_verification"
    PENDING_REVIEW = "pending_review"
    PUBLISHED = "published"
    REJECTED = "rejected"
    WITHDRAWN = "withdrawn"
    STATUS_CHOICES = [(s, s) for s in (PENDING_VERIFICATION, PENDING_REVIEW, PUBLISHED, REJECTED, WITHDRAWN)]

    id = models.CharField(max_length=21, primary_key=True)
    org = models.ForeignKey("accounts.Organization", on_delete=models.CASCADE, related_name="atlas_registrations")
    status = models.CharField(max_length=24, choices=STATUS_CHOICES, default=PENDING_VERIFICATION)
    name = models.CharField(max_length=constants.NAME_MAX)
    operator = models.CharField(max_length=constants.OPERATOR_MAX)
    domain = models.CharField(max_length=253)
    tokens = models.JSONField(default=list)
    purpose = models.CharField(max_length=20, choices=PURPOSE_CHOICES, default="other")
    user_agent = models.CharField(max_length=constants.USER_AGENT_MAX, blank=True)
    description = models.CharField(max_length=constants.DESCRIPTION_MAX, blank=True)
    policy_url = models.URLField(max_length=500, blank=True)
    key_directory_url = models.URLField(max_length=500, blank=True)
    key_directory_ok = models.BooleanField(default=False)
    follows_robots_txt = models.BooleanField(null=True, blank=True)
    proof_value = models.CharField(max_length=120)
    proof_method = models.CharField(max_length=10, blank=True)
    note = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField()
    updated_at = models.DateTimeField(auto_now=True)
    verified_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.status})"


class Sighting(models.Model):
    """Requests to this service that claimed a registry agent, per agent per UTC day; no addresses kept."""

    day = models.DateField()
    agent_slug = models.SlugField(max_length=80)
    requests = models.PositiveIntegerField(default=0)
    verified = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0, help_text="Claimed the agent but failed its verification.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["day", "agent_slug"], name="atlas_sighting_day_agent")]
        ordering = ["-day", "agent_slug"]

    def __str__(self) -> str:
        return f"{self.day} {self.agent_slug}"


class TrafficReport(models.Model):
    """The nightly report over the whole observed period of sightings."""

    built_at = models.DateTimeField()
    body = models.JSONField()

    class Meta:
        ordering = ["-built_at"]

    def __str__(self) -> str:
        return f"traffic report {self.built_at:%Y-%m-%d %H:%M}"


class Dataset(models.Model):
    """A built dataset: its files per format, row count and licence text (built by a Celery task)."""

    id = models.SlugField(max_length=80, primary_key=True)
    title = models.CharField(max_length=200)
    tier = models.CharField(max_length=10)
    formats = models.JSONField(default=list)
    rows = models.PositiveIntegerField(default=0)
    files = models.JSONField(default=dict, help_text="{format: text}")
    license = models.TextField()
    note = models.CharField(max_length=300, blank=True)
    built_at = models.DateTimeField()

    def __str__(self) -> str:
        return self.id
