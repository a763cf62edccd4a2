"""Request and response shapes of the account routes."""

from rest_framework import serializers

from accounts.models import ApiKey, AuditEvent, Organization


class SignupIn(serializers.Serializer):
    email = serializers.EmailField(required=False, max_length=254)
    password = serializers.CharField(required=False, min_length=12, max_length=128, trim_whitespace=False, write_only=True)
    org_name = serializers.CharField(required=False, max_length=200)


class OrgOut(serializers.ModelSerializer):
    has_login = serializers.SerializerMethodField()

    class Meta:
        model = Organization
        fields = ["id", "name", "plan", "has_login", "created_at"]

    def get_has_login(self, org) -> bool:
        return org.owner_id is not None


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
