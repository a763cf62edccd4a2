"""Account operations: signup, keys, organization settings, claim, the audit log."""

import logging
import secrets
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.mail import send_mail
from django.db import IntegrityError, transaction

from accounts import domains
from accounts.keys import key_generate
from accounts.models import ApiKey, AuditEvent, DomainProof, Organization
from accounts.webhooks import webhook_emit
from core import clock
from core.errors import BadRequest, Conflict, NotFound, ServiceUnavailable, Unprocessable

log = logging.getLogger(__name__)


def audit_record(*, org: Organization, action: str, actor: str = "", target: str = "", data: dict | None = None,
                 ip: str = "") -> AuditEvent:
    """Append one event to the organization's audit log. Never pass a secret in `data`."""
    return AuditEvent.objects.create(org=org, action=action, actor=actor[:120], target=target[:200],
                                     data=data or {}, ip=ip[:64], created_at=clock.now())


def audit_list(*, org: Organization, limit: int, before: datetime | None = None) -> tuple[list[AuditEvent], str | None]:
    """Newest first; `next_before` is the time of the last event when more remain."""
    events = AuditEvent.objects.filter(org=org)
    if before is not None:
        events = events.filter(created_at__lt=before)
    rows = list(events.order_by("-created_at", "-id")[: limit + 1])
    next_before = None
    if len(rows) > limit:
        rows = rows[:limit]
        next_before = rows[-1].created_at.isoformat()
    return rows, next_before


@dataclass(frozen=True)
class IssuedKey:
    """A key as created: `raw` is shown to the caller once and never stored."""

    key: ApiKey
    raw: str


def _email_taken(email: str) -> bool:
    return get_user_model().objects.filter(email__iexact=email).exists()


def _password_check(password: str, email: str) -> None:
    user = get_user_model()(username=email, email=email)
    try:
        validate_password(password, user=user)
    except DjangoValidationError as exc:
        raise BadRequest(f"password: {exc.messages[0]}") from None


def _person_create(email: str, password: str):
    User = get_user_model()
    if _email_taken(email):
        raise Conflict("An account with this email is already registered.")
    _password_check(password, email)
    try:
        with transaction.atomic():
            return User.objects.create_user(username=email.lower(), email=email.lower(), password=password)
    except IntegrityError:
        raise Conflict("An account with this email is already registered.") from None


def active_key_limit(org: Organization) -> int:
    """Anonymous agents' accounts hold fewer keys until they verify a domain or add a login."""
    if org.is_verified:
        return settings.API_KEYS_MAX_ACTIVE
    return min(settings.API_KEYS_MAX_ACTIVE, settings.API_KEYS_MAX_ACTIVE_UNVERIFIED)


def api_key_issue(*, org: Organization, name: str, scope: str = ApiKey.SCOPE_FULL, actor: str = "", ip: str = "") -> IssuedKey:
    """A new key for the organization, within its limit of active keys."""
    with transaction.atomic():
        # Lock the organization row so two concurrent creations cannot both pass the limit.
        Organization.objects.select_for_update().filter(pk=org.pk).first()
        org.refresh_from_db(fields=["owner", "domain_verified_at"])
        active = ApiKey.objects.filter(org=org, is_active=True).count()
        if active >= active_key_limit(org):
            hint = "" if org.is_verified else " A verified domain or a login raises the limit."
            raise Conflict(f"This organization already has {active} active keys, the most allowed; revoke one first.{hint}")
        raw, prefix, digest = key_generate()
        key = ApiKey.objects.create(org=org, name=name, scope=scope, prefix=prefix, key_hash=digest)
        audit_record(org=org, action="accounts.key.created", actor=actor, target=str(key.pk),
                     data={"name": name, "scope": scope, "prefix": prefix}, ip=ip)
        webhook_emit(org=org, type="account.key.created", data={"id": str(key.pk), "prefix": prefix, "scope": scope})
    return IssuedKey(key, raw)


def api_key_revoke(*, org: Organization, key_id, actor: str = "", ip: str = "") -> ApiKey:
    """Deactivate a key of this organization; it fails at once. Revoking twice is harmless."""
    key = ApiKey.objects.filter(org=org, pk=key_id).first()
    if key is None:
        raise NotFound("No API key with this id in your organization.")
    if key.is_active:
        ApiKey.objects.filter(pk=key.pk).update(is_active=False, revoked_at=clock.now())
        key.refresh_from_db()
        audit_record(org=org, action="accounts.key.revoked", actor=actor, target=str(key.pk),
                     data={"prefix": key.prefix}, ip=ip)
        webhook_emit(org=org, type="account.key.revoked", data={"id": str(key.pk), "prefix": key.prefix})
    return key


def signup(*, email: str | None = None, password: str | None = None, org_name: str | None = None, ip: str = "") -> tuple[Organization, IssuedKey]:
    """A new organization with its first full key: an agent's (no login) or a person's (email and password)."""
    if bool(email) != bool(password):
        raise BadRequest("email and password must be sent together, or neither for an agent's account.")
    if email and not settings.SIGNUP_EMAIL_ENABLED:
        raise ServiceUnavailable("Signup with an email is not enabled on this service; send an empty body for an agent's account.")
    with transaction.atomic():
        owner = _person_create(email, password) if email else None
        name = org_name or (email.split("@")[0] if email else f"agent-{secrets.token_hex(4)}")
        org = Organization.objects.create(name=name, owner=owner)
        audit_record(org=org, action="accounts.org.created", actor="signup", target=str(org.pk),
                     data={"login": owner is not None}, ip=ip)
        issued = api_key_issue(org=org, name="default", actor="signup", ip=ip)
    return org, issued


def org_update(*, org: Organization, actor: str = "", ip: str = "", **changes) -> Organization:
    """Change data settings (`store_inputs`, `retention_days`); audited."""
    fields = [name for name in ("store_inputs", "retention_days") if name in changes]
    for name in fields:
        setattr(org, name, changes[name])
    if fields:
        org.save(update_fields=fields)
        audit_record(org=org, action="accounts.org.updated", actor=actor, target=str(org.pk),
                     data={name: changes[name] for name in fields}, ip=ip)
    return org


def org_delete(*, org: Organization, confirm: str) -> dict:
    """Delete the organization and everything it owns, once `confirm` is its exact name; its subscriptions
    are canceled first."""
    if confirm != org.name:
        raise BadRequest("confirm must be the exact organization name.")
    from billing.services import subscriptions_cancel_now  # billing imports accounts; imported here, at use

    canceled = subscriptions_cancel_now(org=org)  # 502 when Stripe cannot cancel: nothing is deleted
    org_id = str(org.pk)
    with transaction.atomic():
        owner = org.owner
        org.delete()
        if owner is not None:
            owner.delete()
    return {"deleted": True, "org_id": org_id, "subscription_canceled": canceled}


def org_claim(*, org: Organization, email: str, password: str, actor: str = "", ip: str = "") -> Organization:
    """Give an agent's account a login; keys and history stay. A confirmation email is sent."""
    if not settings.SIGNUP_EMAIL_ENABLED:
        raise ServiceUnavailable("Claiming an account with an email is not enabled on this service.")
    if org.owner_id is not None:
        raise Conflict("This account already has a login.")
    with transaction.atomic():
        locked = Organization.objects.select_for_update().get(pk=org.pk)
        if locked.owner_id is not None:
            raise Conflict("This account already has a login.")
        locked.owner = _person_create(email, password)
        locked.save(update_fields=["owner"])
        audit_record(org=locked, action="accounts.org.claimed", actor=actor, target=str(org.pk), ip=ip)
    try:
        send_mail(
            "Your account is claimed",
            f"The organization {locked.name} can now be signed in to as {email}. If this was not you, reply to this email.",
            settings.DEFAULT_FROM_EMAIL, [email],
        )
    except Exception:  # noqa: BLE001 - the claim stands; a lost confirmation is logged, not fatal
        log.exception("claim confirmation email to org %s could not be sent", locked.pk)
    return locked


# Domain proof for an organization.


def _domain_holder(domain: str) -> Organization | None:
    return Organization.objects.filter(domain=domain, domain_verified_at__isnull=False).first()


def org_domain_start(*, org: Organization, domain: str, actor: str = "", ip: str = "") -> dict:
    """Start proving control of `domain`: returns the value to publish (DNS TXT or well-known file)."""
    domain = domains.domain_normalize(domain)
    holder = _domain_holder(domain)
    if holder is not None and holder.pk != org.pk:
        raise Conflict("This domain is verified by another account.")
    now = clock.now()
    with transaction.atomic():
        DomainProof.objects.filter(purpose=DomainProof.ORG, org=org).delete()
        proof = DomainProof.objects.create(purpose=DomainProof.ORG, org=org, domain=domain, value=domains.proof_value_new(),
                                           requested_ip=ip, created_at=now, expires_at=now + domains.ORG_PROOF_TTL)
        audit_record(org=org, action="accounts.domain.proof_started", actor=actor, target=domain, ip=ip)
    return {**domains.proof_instructions(domain, proof.value), "expires_at": proof.expires_at.isoformat(),
            "verified": holder is not None and holder.pk == org.pk}


def org_domain_verify(*, org: Organization, actor: str = "", ip: str = "") -> dict:
    """Check the published value; the domain becomes the organization's (200), or 409 / 422."""
    proof = DomainProof.objects.filter(purpose=DomainProof.ORG, org=org, expires_at__gt=clock.now()).first()
    if proof is None:
        raise Conflict("No domain proof is in progress; start one with POST /api/v1/org/domain.")
    holder = _domain_holder(proof.domain)
    if holder is not None and holder.pk != org.pk:
        raise Conflict("This domain is verified by another account.")
    found = domains.proof_found(proof.domain, [proof.value])
    if found is None:
        raise Unprocessable(f"The value was not found at _svc-atlas.{proof.domain} (DNS TXT) nor at https://{proof.domain}/.well-known/svc-atlas.txt.")
    method, _ = found
    now = clock.now()
    try:
        with transaction.atomic():
            Organization.objects.filter(pk=org.pk).update(domain=proof.domain, domain_verified_at=now)
            proof.delete()
            audit_record(org=org, action="accounts.domain.verified", actor=actor, target=proof.domain,
                         data={"method": method}, ip=ip)
            webhook_emit(org=org, type="account.domain.verified", data={"domain": proof.domain, "method": method})
    except IntegrityError:
        raise Conflict("This domain is verified by another account.") from None
    org.refresh_from_db()
    return {"domain": org.domain, "verified": True, "method": method, "verified_at": org.domain_verified_at.isoformat()}


# Recovery of a lost key by proof of the domain.

RECOVERY_PENDING_PER_DOMAIN = 5


def recovery_start(*, domain: str, ip: str = "") -> dict:
    """Issue a value to publish; the same answer whether or not an account holds the domain. Counts 24 hours."""
    domain = domains.domain_normalize(domain)
    now = clock.now()
    with transaction.atomic():
        proof = DomainProof.objects.create(purpose=DomainProof.RECOVERY, domain=domain, value=domains.proof_value_new(),
                                           requested_ip=ip, created_at=now, expires_at=now + domains.RECOVERY_PROOF_TTL)
        stale = DomainProof.objects.filter(purpose=DomainProof.RECOVERY, domain=domain).order_by("-created_at")
        stale_ids = list(stale.values_list("pk", flat=True)[RECOVERY_PENDING_PER_DOMAIN:])
        DomainProof.objects.filter(pk__in=stale_ids).delete()
        DomainProof.objects.filter(purpose=DomainProof.RECOVERY, expires_at__lte=now).delete()
    return {**domains.proof_instructions(domain, proof.value), "expires_at": proof.expires_at.isoformat()}


def recovery_verify(*, domain: str, ip: str = "") -> dict:
    """With the value published: revoke every key of the account holding the domain, return one new key once."""
    domain = domains.domain_normalize(domain)
    now = clock.now()
    proofs = list(DomainProof.objects.filter(purpose=DomainProof.RECOVERY, domain=domain, expires_at__gt=now))
    not_found = Unprocessable("No recovery is in progress for this domain, or its value was not found there.")
    if not proofs:
        raise not_found
    found = domains.proof_found(domain, [proof.value for proof in proofs])
    if found is None:
        raise not_found
    method, _ = found
    with transaction.atomic():
        org = Organization.objects.select_for_update().filter(domain=domain, domain_verified_at__isnull=False).first()
        if org is None:
            raise Unprocessable("The proof was found, but no account has verified this domain.")
        revoked = ApiKey.objects.filter(org=org, is_active=True).update(is_active=False, revoked_at=now)
        DomainProof.objects.filter(purpose=DomainProof.RECOVERY, domain=domain).delete()
        audit_record(org=org, action="accounts.recovery.completed", actor="recovery", target=domain,
                     data={"method": method, "revoked_keys": revoked}, ip=ip)
        issued = api_key_issue(org=org, name="recovered", actor="recovery", ip=ip)
        webhook_emit(org=org, type="account.recovered", data={"domain": domain, "revoked_keys": revoked, "key_prefix": issued.key.prefix})
    return {"org_id": str(org.pk), "domain": domain, "api_key": issued.raw, "key_prefix": issued.key.prefix,
            "revoked_keys": revoked}
