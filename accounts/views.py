"""Account routes: thin views over accounts.services."""

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from accounts import services
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
)
from core.api import ApiView
from core.net import client_ip
from core.schema import errors
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

    @extend_schema(tags=["Account"], responses={200: ApiKeyRevokedOut, **errors(401, 403, 404)})
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
