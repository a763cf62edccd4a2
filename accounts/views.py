"""Account routes: thin views over accounts.services."""

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from accounts import services, webhooks
from accounts.models import WebhookDelivery
from accounts.serializers import (
    ApiKeyIn,
    ApiKeyIssuedOut,
    ApiKeyListOut,
    ApiKeyOut,
    ApiKeyRevokedOut,
    AuditEventOut,
    AuditListOut,
    AuditQueryIn,
    ClaimIn,
    DomainIn,
    DomainProofOut,
    DomainVerifiedOut,
    MeOut,
    OrgDeleteIn,
    OrgDeleteOut,
    OrgOut,
    OrgSettingsIn,
    OrgSettingsOut,
    RecoveredOut,
    SignupIn,
    SignupOut,
    WebhookDeliveryOut,
    WebhookIn,
    WebhookOut,
    WebhookSetOut,
    WebhookTestOut,
)
from core.api import ApiView
from core.errors import Conflict
from core.net import client_ip
from core.schema import errors, obj
from core.throttle import throttle


def _actor(request) -> dict:
    return {"actor": request.api_key.prefix if request.api_key else "", "ip": client_ip(request)}


class SignupView(ApiView):
    """Create an account. An empty body makes an agent's account (a key, no login); email and
    password together make an account a person signs in to. The first key is returned once."""

    auth = "none"

    @extend_schema(tags=["Onboarding"], request=SignupIn, responses={201: SignupOut, **errors(400, 409, 429, 503, s409="Email already registered.", s503="Signup with an email is not enabled.")})
    def post(self, request):
        data = self.validated(SignupIn, request.data)
        throttle(request, group="signup", rate=settings.SIGNUP_RATE, message="Too many signups from this address; try again later.")
        org, issued = services.signup(ip=client_ip(request), **data)
        body = {
            "organization": OrgOut(org).data,
            "api_key": issued.raw,
            "key": ApiKeyOut(issued.key).data,
            "key_shown_once": True,
        }
        return Response(body, status=201)


class MeView(ApiView):
    """Who is calling: the organization behind the key, and the key itself (by prefix)."""

    scope = "evaluate"

    @extend_schema(tags=["Account"], responses={200: MeOut, **errors(401)})
    def get(self, request):
        return Response({"organization": OrgOut(request.org).data, "key": ApiKeyOut(request.api_key).data})


class ApiKeyListView(ApiView):
    """List the organization's keys by prefix (the full key is never listed), or issue a new one."""

    @extend_schema(tags=["Account"], responses={200: ApiKeyListOut, **errors(401, 403)})
    def get(self, request):
        keys = request.org.api_keys.all()
        return Response({"api_keys": ApiKeyOut(keys, many=True).data})

    @extend_schema(tags=["Account"], request=ApiKeyIn, responses={201: ApiKeyIssuedOut, **errors(400, 401, 403, 409, s409="Active key limit reached.")})
    def post(self, request):
        data = self.validated(ApiKeyIn, request.data)
        issued = services.api_key_issue(org=request.org, **data, **_actor(request))
        body = {**ApiKeyOut(issued.key).data, "key": issued.raw, "key_shown_once": True}
        return Response(body, status=201)


class ApiKeyDetailView(ApiView):
    """Revoke a key: it stops working at once."""

    @extend_schema(tags=["Account"], request=None, responses={200: ApiKeyRevokedOut, **errors(401, 403, 404)})
    def delete(self, request, key_id):
        key = services.api_key_revoke(org=request.org, key_id=key_id, **_actor(request))
        return Response({"id": key.pk, "is_active": key.is_active})


class OrgView(ApiView):
    """The organization's data settings; deleting the organization removes everything it owns."""

    @extend_schema(tags=["Account"], responses={200: OrgSettingsOut, **errors(401, 403)})
    def get(self, request):
        return Response(OrgSettingsOut(request.org).data)

    @extend_schema(tags=["Account"], request=OrgSettingsIn, responses={200: OrgSettingsOut, **errors(400, 401, 403)})
    def patch(self, request):
        data = self.validated(OrgSettingsIn, request.data)
        org = services.org_update(org=request.org, **data, **_actor(request))
        return Response(OrgSettingsOut(org).data)

    @extend_schema(tags=["Account"], request=OrgDeleteIn, responses={200: OrgDeleteOut, **errors(400, 401, 403, 502)})
    def delete(self, request):
        data = self.validated(OrgDeleteIn, request.data)
        return Response(services.org_delete(org=request.org, confirm=data["confirm"]))


class OrgClaimView(ApiView):
    """Give an agent's account a login (email and password); keys and history are unchanged."""

    @extend_schema(tags=["Onboarding"], request=ClaimIn, responses={201: OrgOut, **errors(400, 401, 403, 409, 503, s409="The account has a login, or the email is registered.")})
    def post(self, request):
        data = self.validated(ClaimIn, request.data)
        org = services.org_claim(org=request.org, **data, **_actor(request))
        return Response(OrgOut(org).data, status=201)


class AuditLogView(ApiView):
    """Security-relevant events of the organization, newest first. Page with `before=<next_before>`."""

    @extend_schema(tags=["Account"], parameters=[AuditQueryIn], responses={200: AuditListOut, **errors(400, 401, 403)})
    def get(self, request):
        query = self.validated(AuditQueryIn, request.query_params)
        events, next_before = services.audit_list(org=request.org, limit=query["limit"], before=query.get("before"))
        return Response({"events": AuditEventOut(events, many=True).data, "next_before": next_before})


class OrgDomainView(ApiView):
    """Start proving control of a domain: publish the returned value as a DNS TXT record at
    `_svc-atlas.<domain>` or as the file `/.well-known/svc-atlas.txt`. A verified domain raises the
    account's limits, opens full Beacon reports and lets a lost key be recovered."""

    @extend_schema(tags=["Onboarding"], request=DomainIn, responses={200: DomainProofOut, **errors(400, 401, 403, 409, s400="Not a public hostname.", s409="Verified by another account.")})
    def post(self, request):
        data = self.validated(DomainIn, request.data)
        return Response(services.org_domain_start(org=request.org, domain=data["domain"], **_actor(request)))


class OrgDomainVerifyView(ApiView):
    """Check that the value is published; the domain becomes the organization's."""

    @extend_schema(tags=["Onboarding"], request=None, responses={200: DomainVerifiedOut, **errors(401, 403, 409, 422, s409="No proof in progress, or the domain is verified by another account.", s422="The value was not found at the domain.")})
    def post(self, request):
        return Response(services.org_domain_verify(org=request.org, **_actor(request)))


class RecoveryStartView(ApiView):
    """Start recovering an agent's account by its verified domain. The answer is the same whether or
    not an account holds the domain; the value counts for 24 hours."""

    auth = "none"

    @extend_schema(tags=["Onboarding"], request=DomainIn, responses={200: DomainProofOut, **errors(400, 429)})
    def post(self, request):
        data = self.validated(DomainIn, request.data)
        throttle(request, group="recover", rate=settings.RECOVERY_RATE, message="Too many recovery attempts from this address; try again later.")
        return Response(services.recovery_start(domain=data["domain"], ip=client_ip(request)))


class RecoveryVerifyView(ApiView):
    """With the value published: every key of the account is revoked and one new key is returned, once."""

    auth = "none"

    @extend_schema(tags=["Onboarding"], request=DomainIn, responses={200: RecoveredOut, **errors(400, 422, 429, s422="No recovery in progress, or the value was not found.")})
    def post(self, request):
        data = self.validated(DomainIn, request.data)
        throttle(request, group="recover-verify", rate=settings.RECOVERY_VERIFY_RATE, message="Too many recovery attempts from this address; try again later.")
        return Response(services.recovery_verify(domain=data["domain"], ip=client_ip(request)))


WEBHOOK_DOC = """

Every event is POSTed as JSON `{id, type, created, org_id, data}` with the header
`Svc-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>` and `Svc-Event-Id`.
Verify it by recomputing the HMAC over the timestamp, a dot and the raw body with your `whsec_…`
secret, comparing in constant time, and refusing timestamps older than five minutes:

    mac = hmac.new(secret.encode(), f"{t}.".encode() + raw_body, hashlib.sha256).hexdigest()

A delivery that does not get a 2xx within 10 seconds is retried after 10 s, 1 min, 5 min, 30 min,
2 h and 6 h. Delivery is at least once: de-duplicate on `id`.
"""


class WebhookView(ApiView):
    __doc__ = "The organization's webhook: its URL, the event kinds, and the latest deliveries." + WEBHOOK_DOC

    @extend_schema(tags=["Account"], responses={200: WebhookOut, **errors(401, 403)})
    def get(self, request):
        hook = webhooks.webhook_get(org=request.org)
        deliveries = WebhookDelivery.objects.filter(event__org=request.org).select_related("event")[:20]
        return Response({
            "configured": hook is not None,
            "url": hook.url if hook else None,
            "secret_prefix": hook.secret_prefix if hook else None,
            "updated_at": hook.updated_at if hook else None,
            "signature_header": webhooks.SIGNATURE_HEADER,
            "event_types": webhooks.EVENT_TYPES,
            "recent_deliveries": WebhookDeliveryOut(deliveries, many=True).data,
        })

    @extend_schema(tags=["Account"], request=WebhookIn, responses={200: WebhookSetOut, **errors(400, 401, 403)})
    def put(self, request):
        """Set the URL, or set it again to rotate the secret: a new signing secret is returned once."""
        data = self.validated(WebhookIn, request.data)
        hook, secret = webhooks.webhook_set(org=request.org, url=data["url"], **_actor(request))
        return Response({"url": hook.url, "secret": secret, "secret_shown_once": True,
                         "signature_header": webhooks.SIGNATURE_HEADER})

    @extend_schema(tags=["Account"], request=None, responses={200: obj("WebhookCleared", cleared=serializers.BooleanField()), **errors(401, 403)})
    def delete(self, request):
        """Remove the webhook; events are no longer sent."""
        webhooks.webhook_delete(org=request.org, **_actor(request))
        return Response({"cleared": True})


class WebhookTestView(ApiView):
    """Send a `webhook.test` event to the configured URL, to check it and your signature check."""

    @extend_schema(tags=["Account"], request=None, responses={202: WebhookTestOut, **errors(401, 403, 409, s409="No webhook is configured.")})
    def post(self, request):
        event = webhooks.webhook_emit(org=request.org, type="webhook.test", data={"message": "Hello from the service."})
        if event is None:
            raise Conflict("No webhook is configured; set one with PUT /api/v1/webhook.")
        return Response({"event_id": event.id, "type": event.type}, status=202)
