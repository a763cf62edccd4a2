"""Request and response shapes of the account routes."""

from rest_framework import serializers

from accounts.models import ApiKey, AuditEvent, Organization


class SignupIn(serializers.Serializer):
    email = serializers.EmailField(required=False, max_length=254)
    password = serializers.CharField(required=False, min_length=12, max_length=128, trim_whitespace=False, write_only=True)
    org_name = serializers.CharField(required=False, max_length=200)


class OrgOut(serializers.ModelSerializer):
    has_login = serializers.SerializerMethodField()
    domain = serializers.SerializerMethodField(help_text="The verified domain, which stands in for an email on an agent's account.")

    class Meta:
        model = Organization
        fields = ["id", "name", "plan", "atlas_tier", "has_login", "domain", "created_at"]

    def get_has_login(self, org) -> bool:
        return org.owner_id is not None

    def get_domain(self, org) -> str | None:
        return org.domain if org.domain_verified_at else None


class ApiKeyOut(serializers.ModelSerializer):
    class Meta:
        model = ApiKey
        fields = ["id", "name", "prefix", "scope", "is_active", "created_at", "last_used_at", "revoked_at"]


class ApiKeyIssuedOut(ApiKeyOut):
    key = serializers.CharField(help_text="The full key. Shown once: store it now.")
    key_shown_once = serializers.BooleanField(default=True)

    class Meta(ApiKeyOut.Meta):
        fields = ApiKeyOut.Meta.fields + ["key", "key_shown_once"]


class SignupOut(serializers.Serializer):
    organization = OrgOut()
    api_key = serializers.CharField(help_text="The first key, scope full. Shown once.")
    key = ApiKeyOut()
    key_shown_once = serializers.BooleanField()


class MeOut(serializers.Serializer):
    organization = OrgOut()
    key = ApiKeyOut()


class ApiKeyIn(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    scope = serializers.ChoiceField(choices=["full", "evaluate"], default="full")


class ApiKeyListOut(serializers.Serializer):
    api_keys = ApiKeyOut(many=True)


class ApiKeyRevokedOut(serializers.Serializer):
    id = serializers.UUIDField()
    is_active = serializers.BooleanField()


class OrgSettingsOut(serializers.ModelSerializer):
    class Meta:
        model = Organization
        fields = ["id", "name", "store_inputs", "retention_days"]


class OrgSettingsIn(serializers.Serializer):
    store_inputs = serializers.BooleanField(required=False)
    retention_days = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=3650)


class OrgDeleteIn(serializers.Serializer):
    confirm = serializers.CharField(trim_whitespace=False, help_text="The exact organization name.")


class OrgDeleteOut(serializers.Serializer):
    deleted = serializers.BooleanField()
    org_id = serializers.UUIDField()
    subscription_canceled = serializers.BooleanField()


class ClaimIn(serializers.Serializer):
    email = serializers.EmailField(max_length=254)
    password = serializers.CharField(min_length=12, max_length=128, trim_whitespace=False, write_only=True)


class AuditEventOut(serializers.ModelSerializer):
    class Meta:
        model = AuditEvent
        fields = ["id", "action", "actor", "target", "data", "ip", "created_at"]


class AuditQueryIn(serializers.Serializer):
    limit = serializers.IntegerField(required=False, default=50, min_value=1, max_value=200)
    before = serializers.DateTimeField(required=False)


class AuditListOut(serializers.Serializer):
    events = AuditEventOut(many=True)
    next_before = serializers.CharField(allow_null=True)


class DomainIn(serializers.Serializer):
    domain = serializers.CharField(max_length=253, help_text="A public hostname, e.g. example.com.")


class DnsRecordOut(serializers.Serializer):
    type = serializers.CharField()
    name = serializers.CharField()
    value = serializers.CharField()


class HttpFileOut(serializers.Serializer):
    url = serializers.CharField()
    body = serializers.CharField()


class DomainProofOut(serializers.Serializer):
    domain = serializers.CharField()
    value = serializers.CharField(help_text="Publish this value in either place.")
    dns = DnsRecordOut()
    http = HttpFileOut()
    expires_at = serializers.DateTimeField()
    verified = serializers.BooleanField(required=False, help_text="Already verified by this organization.")


class DomainVerifiedOut(serializers.Serializer):
    domain = serializers.CharField()
    verified = serializers.BooleanField()
    method = serializers.ChoiceField(choices=["dns", "http"])
    verified_at = serializers.DateTimeField()


class RecoveredOut(serializers.Serializer):
    org_id = serializers.UUIDField()
    domain = serializers.CharField()
    api_key = serializers.CharField(help_text="The new key, scope full. Shown once.")
    key_prefix = serializers.CharField()
    revoked_keys = serializers.IntegerField()


class WebhookIn(serializers.Serializer):
    url = serializers.CharField(max_length=2000, help_text="https URL (http is allowed for localhost only).")


class WebhookDeliveryOut(serializers.Serializer):
    event_id = serializers.CharField(source="event.id")
    type = serializers.CharField(source="event.type")
    status = serializers.CharField()
    attempts = serializers.IntegerField()
    last_status_code = serializers.IntegerField(allow_null=True)
    last_error = serializers.CharField()
    next_attempt_at = serializers.DateTimeField()
    delivered_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()


class WebhookOut(serializers.Serializer):
    configured = serializers.BooleanField()
    url = serializers.CharField(allow_null=True)
    secret_prefix = serializers.CharField(allow_null=True, help_text="The first characters of the signing secret.")
    updated_at = serializers.DateTimeField(allow_null=True)
    signature_header = serializers.CharField()
    event_types = serializers.DictField(child=serializers.CharField(), help_text="Every event kind and when it is sent.")
    recent_deliveries = WebhookDeliveryOut(many=True)


class WebhookSetOut(serializers.Serializer):
    url = serializers.CharField()
    secret = serializers.CharField(help_text="The signing secret (`whsec_…`). Shown once: store it now.")
    secret_shown_once = serializers.BooleanField()
    signature_header = serializers.CharField()


class WebhookTestOut(serializers.Serializer):
    event_id = serializers.CharField()
    type = serializers.CharField()
