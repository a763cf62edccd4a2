"""Atlas operations: one function per operation, called alike by the REST views, tasks, MCP, A2A and x402."""

import logging
import re
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils.text import slugify

from accounts import domains
from accounts.models import Organization
from accounts.services import audit_record
from accounts.webhooks import webhook_emit
from atlas import constants, ipcheck, webbotauth
from atlas.matcher import AGENT, CONTROL, GENERIC
from atlas.models import Agent, IpRangeList, Registration, Sighting
from atlas.registry import entry_public, registry_changed, snapshot
from atlas.seed import seed_build
from billing import constants as billing_constants
from billing import metering
from billing import services as billing
from billing.models import Allowance
from core import clock, safe_http
from core.errors import BadRequest, Conflict, NotFound, PaymentRequired, ServiceUnavailable, TooManyRequests, Unprocessable
from core.ids import is_valid_id, new_id

log = logging.getLogger(__name__)

SEED_FIELDS = ("name", "operator", "operator_url", "purpose", "kind", "user_agents", "user_agent_tokens", "robots_txt_token",
               "verification", "ip_lists", "rdns_suffixes", "follows_robots_txt", "respects_robots_txt",
               "robots_txt_classification", "description", "docs_url", "examples", "sources")


def is_paid(org: Organization | None) -> bool:
    return org is not None and org.atlas_tier in constants.PAID_TIERS


# Seed and refresh ------------------------------------------------------------------------------


def _parse_ip_list(document) -> tuple[list[str], str]:
    """(prefixes, creationTime) of an operator's list: Google's format, or a bare list of addresses."""
    prefixes: list[str] = []
    created = ""
    items = document
    if isinstance(document, dict):
        created = str(document.get("creationTime") or "")
        items = document.get("prefixes") or []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            prefixes += [str(item[key]) for key in ("ipv4Prefix", "ipv6Prefix") if item.get(key)]
        elif isinstance(item, str):
            prefixes.append(item)
    valid = []
    for prefix in prefixes:
        try:
            ipcheck.RangeIndex.build([prefix])
            valid.append(prefix.strip())
        except ValueError:
            continue
    return valid, created


def registry_refresh(*, fetch: bool = False) -> dict:
    """Load the seed into the registry (entries an operator edited or a registrant owns are left alone) and the
    operators' IP lists; with `fetch`, each list is fetched from its operator through safe_http, keeping its date."""
    entries, _generic, lists = seed_build()
    now = clock.now()
    existing = {agent.slug: agent for agent in Agent.objects.all()}
    created = updated = 0
    with transaction.atomic():
        new_rows = []
        for entry in entries:
            agent = existing.get(entry["slug"])
            values = {field: entry[field] for field in SEED_FIELDS}
            if agent is None:
                new_rows.append(Agent(slug=entry["slug"], **values))
                created += 1
            elif not agent.locked and agent.registration_id is None:
                for field, value in values.items():
                    setattr(agent, field, value)
                agent.save()
                updated += 1
        Agent.objects.bulk_create(new_rows, ignore_conflicts=True)
        seed_slugs = {entry["slug"] for entry in entries}
        removed, _ = (Agent.objects.filter(locked=False, registration__isnull=True).exclude(slug__in=seed_slugs)
                      .delete())
        for item in lists:
            IpRangeList.objects.get_or_create(id=item["id"], defaults={
                "operator": item["operator"], "label": item["label"], "upstream_url": item["upstream_url"],
                "covers": item["covers"], "prefixes": item["prefixes"], "creation_time": "",
                "fetched_at": item["fetched_at"], "origin": "seed",
            })
    fetched = failed = 0
    if fetch:
        for row in IpRangeList.objects.all():
            try:
                response = safe_http.fetch(row.upstream_url, max_bytes=4_000_000, timeout=10)
                if not response.ok:
                    raise ValueError(f"{row.upstream_url} answered {response.status}.")
                prefixes, creation = _parse_ip_list(response.json())
                if not prefixes:
                    raise ValueError(f"{row.upstream_url} holds no prefixes.")
            except (safe_http.SafeHttpError, ValueError) as exc:
                row.last_error = (getattr(exc, "message", None) or str(exc))[:300]
                row.save(update_fields=["last_error", "updated_at"])
                failed += 1
                continue
            row.prefixes, row.creation_time, row.fetched_at = prefixes, creation, now
            row.origin, row.last_error = "fetched", ""
            row.save()
            fetched += 1
    directories = 0
    if fetch:  # the key directories of signed entries, so a removed key stops verifying
        for url in set(Agent.objects.exclude(web_bot_auth_key_directory="").values_list("web_bot_auth_key_directory", flat=True)):
            keys, _error = webbotauth.directory_keys(webbotauth.directory_url(url), refresh=True)
            directories += bool(keys)
    registry_changed()
    return {"entries": Agent.objects.count(), "created": created, "updated": updated, "removed": removed,
            "ip_lists": IpRangeList.objects.count(), "ip_lists_fetched": fetched, "ip_lists_failed": failed,
            "key_directories_ok": directories}


def registry_seed_if_empty() -> None:
    if not Agent.objects.exists():
        registry_refresh()


# Lookup and verification -------------------------------------------------------------------------


def _how(entry: dict, snap) -> dict:
    method = entry["verification"]
    lists = [snap.lists[i] for i in entry["_ip_lists"] if i in snap.lists]
    suffixes = entry["_rdns_suffixes"]
    if entry["web_bot_auth_key_directory"]:
        method = "web_bot_auth"
    if method == "web_bot_auth":
        how = (f"Verify the request's Web Bot Auth signature (RFC 9421) against the key directory "
               f"{entry['web_bot_auth_key_directory']}.")
    elif method == "ip_ranges":
        parts = []
        if lists:
            parts.append("check that the client address is in " + ", ".join(item["upstream_url"] for item in lists))
        if suffixes:
            parts.append("check forward-confirmed reverse DNS under " + ", ".join(suffixes))
        how = ("To verify, " + " or ".join(parts) + ".") if parts else "Check the operator's published addresses."
    else:
        how = "The operator publishes no way to verify this claim: the User-Agent string alone is spoofable."
    return {
        "method": method, "label": constants.VERIFICATION[method], "verifiable": method != "user_agent_only", "how": how,
        "ip_lists": [{k: v for k, v in item.items() if k != "prefixes"} | {"prefixes": item["prefixes"]} for item in lists],
        "rdns_suffixes": suffixes, "key_directory": entry["web_bot_auth_key_directory"],
    }


def _public(entry: dict) -> dict:
    return {k: v for k, v in entry.items() if not k.startswith("_")}


def lookup(*, user_agent: str) -> dict:
    """What a User-Agent string claims to be: the agent (whole tokens, most specific first), its operator and
    purpose, and how the claim can be verified. Generic clients claim no operator. Never says "verified"."""
    snap = snapshot()
    best = snap.matcher.best(user_agent)
    agent, generic, control = best.get(AGENT), best.get(GENERIC), best.get(CONTROL)
    result = {"user_agent": user_agent, "claim": "none", "matched_token": None, "agent": None, "operator": None,
              "purpose": None, "category": None, "generic_client": None, "verification": None, "verified": None,
              "data_version": constants.DATA_VERSION}
    if agent is not None:
        entry = snap.entries[agent.key]
        result.update(claim="agent", matched_token=agent.token, agent=_public(entry), operator=entry["operator"],
                      purpose=entry["purpose"], category=entry["category"], verification=_how(entry, snap))
    elif control is not None:
        entry = snap.entries[control.key]
        result.update(claim="control_token", matched_token=control.token, agent=_public(entry), operator=entry["operator"],
                      verification={"method": "unattributable", "label": constants.VERIFICATION["unattributable"],
                                    "verifiable": False, "how": f"{control.token} is a robots.txt control token: no crawler "
                                    "sends it as a User-Agent, so this claim is unattributable.", "ip_lists": [],
                                    "rdns_suffixes": [], "key_directory": None})
    if generic is not None:
        client = snap.generic[generic.key]
        result["generic_client"] = {"name": client["name"], "kind": client["kind"], "token": generic.token}
        if result["claim"] == "none":
            result.update(claim="generic_client", matched_token=generic.token, verification={
                "method": "unattributable", "label": constants.VERIFICATION["unattributable"], "verifiable": False,
                "how": f"{client['name']} is a generic {client['kind']} anyone can run: it claims no operator.",
                "ip_lists": [], "rdns_suffixes": [], "key_directory": None})
    return result


def _ip_in_lists(address, list_ids: list[str], snap) -> str | None:
    for list_id in list_ids:
        index = snap.ranges.get(list_id)
        if index is not None and address in index:
            return list_id
    return None


def claim_verify(*, user_agent: str, ip: str | None = None, method: str = "GET", url: str | None = None,
                 headers: dict | None = None, resolve_dns: bool = True) -> dict:
    """Whether a request's claim is verified: Web Bot Auth, then published IP ranges or FCrDNS (spec part 5.3)."""
    result = lookup(user_agent=user_agent)
    snap = snapshot()
    checks: dict = {"web_bot_auth": None, "ip_ranges": None, "reverse_dns": None}
    wba = None
    if headers:
        wba = webbotauth.verify_request(method=method, url=url or "", headers=headers)
        checks["web_bot_auth"] = wba.as_dict()
    entry = snap.entries.get(result["agent"]["slug"]) if result["claim"] == "agent" else None
    if entry is None and wba is not None and wba.outcome == "verified":
        for candidate in snap.entries.values():
            if candidate["web_bot_auth_key_directory"] and webbotauth.directory_url(candidate["web_bot_auth_key_directory"]) == wba.directory:
                entry = candidate
                result.update(claim="agent", agent=_public(entry), operator=entry["operator"], purpose=entry["purpose"],
                              category=entry["category"], verification=_how(entry, snap))
                break
    verdict, verified = "user_agent_only", False
    if entry is not None:
        directory = entry["web_bot_auth_key_directory"]
        if directory and wba is not None and wba.outcome == "verified" and webbotauth.directory_url(directory) == wba.directory:
            verdict, verified = "web_bot_auth", True
        address = None
        if not verified and ip:
            try:
                address = ipcheck.parse_ip(ip)
            except ValueError:
                raise BadRequest("ip must be an IPv4 or IPv6 address.") from None
        if not verified and address is not None and entry["_ip_lists"]:
            hit = _ip_in_lists(address, entry["_ip_lists"], snap)
            checks["ip_ranges"] = {"passed": hit is not None, "list": hit,
                                   "lists": [snap.lists[i] | {"prefixes": snap.lists[i]["prefixes"]} for i in entry["_ip_lists"] if i in snap.lists]}
            if hit:
                verdict, verified = "ip_ranges", True
        if not verified and address is not None and entry["_rdns_suffixes"] and resolve_dns:
            checks["reverse_dns"] = ipcheck.fcrdns(str(address), entry["_rdns_suffixes"])
            if checks["reverse_dns"]["passed"]:
                verdict, verified = "ip_ranges", True
        has_method = bool(directory or entry["_ip_lists"] or entry["_rdns_suffixes"])
        tried = (wba is not None and wba.outcome != "absent") or address is not None
        if not verified and has_method and tried:
            verdict = "unattributable"
        elif not verified and has_method:
            verdict = "user_agent_only"
    elif result["claim"] in ("control_token", "generic_client"):
        verdict = "unattributable"
    result["verified"] = verified
    result["verdict"] = verdict
    result["verdict_label"] = constants.VERIFICATION[verdict]
    result["checks"] = checks
    return result


# Reads -----------------------------------------------------------------------------------------


def agent_full(agent: Agent) -> dict:
    """Public fields plus the curated ones (paid tiers)."""
    body = entry_public(agent)
    lists = {row.id: row for row in IpRangeList.objects.filter(id__in=agent.ip_lists)}
    body.update({
        "examples": list(agent.examples), "curated_notes": agent.curated_notes or None,
        "robots_txt_classification": agent.robots_txt_classification or None,
        "rdns_suffixes": list(agent.rdns_suffixes),
        "ip_lists": [{"id": row.id, "upstream_url": row.upstream_url, "creation_time": row.creation_time or None,
                      "fetched_at": row.fetched_at.isoformat() if row.fetched_at else None, "prefixes": len(row.prefixes)}
                     for row in lists.values()],
    })
    return body


def agents_search(*, q: str = "", purpose: str = "", operator: str = "", verification: str = "", limit: int = 50,
                  offset: int = 0) -> tuple[list[Agent], int]:
    rows = Agent.objects.all()
    if q:
        rows = rows.filter(Q(name__icontains=q) | Q(operator__icontains=q) | Q(user_agents__icontains=q)
                           | Q(description__icontains=q) | Q(slug__icontains=q))
    if purpose:
        matching = [key for key, label in constants.PURPOSES.items() if purpose.lower() in key or purpose.lower() in label.lower()]
        rows = rows.filter(purpose__in=matching)
    if operator:
        rows = rows.filter(operator__icontains=operator)
    if verification:
        rows = rows.filter(verification=verification)
    total = rows.count()
    return list(rows.order_by("name", "slug")[offset:offset + limit]), total


def agent_get(*, slug: str, org: Organization | None, fields: str | None = None, osint: bool = True) -> dict:
    agent = Agent.objects.filter(slug=slug).first()
    if agent is None:
        raise NotFound(f"No registry entry has the slug {slug!r}.")
    wanted = fields or ("full" if is_paid(org) else "public")
    if wanted == "full" and not is_paid(org):
        raise PaymentRequired("fields=full needs Atlas Pro or Team.")
    body = {"fields": wanted, "agent": agent_full(agent) if wanted == "full" else entry_public(agent), "osint": []}
    if osint:
        findings = agent.findings.all()
        if wanted == "full":
            body["osint"] = [{"title": f.title, "detail": f.detail, "source_url": f.source_url or None,
                              "observed_on": f.observed_on.isoformat() if f.observed_on else None,
                              "recorded_at": f.created_at.isoformat()} for f in findings]
        else:
            body["osint"] = [{"title": f.title, "observed_on": f.observed_on.isoformat() if f.observed_on else None}
                             for f in findings]
    return body


def registry_counts() -> dict:
    rows = Agent.objects.all()
    counts = {"agents": rows.count(), "by_purpose": {}, "by_verification": {}, "by_kind": {}}
    for purpose, verification, kind in rows.values_list("purpose", "verification", "kind"):
        counts["by_purpose"][purpose] = counts["by_purpose"].get(purpose, 0) + 1
        counts["by_verification"][verification] = counts["by_verification"].get(verification, 0) + 1
        counts["by_kind"][kind] = counts["by_kind"].get(kind, 0) + 1
    counts["self_registered"] = rows.filter(registration__isnull=False).count()
    counts["ip_lists"] = IpRangeList.objects.count()
    counts["generic_clients"] = len(seed_build()[1])
    return counts


# Registrations ---------------------------------------------------------------------------------

_TOKEN_CHARS = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._+-]*$")


def _field_error(message: str, field: str) -> BadRequest:
    return BadRequest(message, extra={"field": field})


def _registry_tokens(exclude_registration_id: str | None = None) -> list[tuple[str, str]]:
    found = []
    rows = Agent.objects.exclude(registration_id=exclude_registration_id) if exclude_registration_id else Agent.objects.all()
    for slug, tokens, robots in rows.values_list("slug", "user_agent_tokens", "robots_txt_token"):
        found += [(token, slug) for token in tokens]
        if robots:
            found.append((robots, slug))
    return found


def _collision(tokens: list[str], *, exclude_registration_id: str | None = None) -> str | None:
    for token in tokens:
        lowered = token.lower()
        for existing, slug in _registry_tokens(exclude_registration_id):
            other = existing.lower()
            if lowered in other or other in lowered:
                return f"The token {token!r} collides with {existing!r} of the registry entry {slug!r}."
    return None


def registration_validate(data: dict) -> dict:
    """Check the fields the serializer cannot (token form, domain, URLs); raises 400 naming the field."""
    tokens = data.get("tokens") or []
    lowered = [token.lower() for token in tokens]
    for position, token in enumerate(tokens):
        if not _TOKEN_CHARS.match(token):
            raise _field_error(f"tokens[{position}] may hold letters, digits, spaces and . _ + - only, starting with a "
                               "letter or digit.", "tokens")
    if len(set(lowered)) != len(lowered):
        raise _field_error("tokens must not repeat a token.", "tokens")
    try:
        data["domain"] = domains.domain_normalize(data["domain"], field="domain")
    except BadRequest as exc:
        raise _field_error(exc.message, "domain") from None
    for name in ("policy_url", "key_directory_url"):
        value = data.get(name) or ""
        if value:
            try:
                safe_http.validate_url(value)
            except safe_http.UnsafeURL as exc:
                raise _field_error(f"{name}: {exc.message}", name) from None
            if not value.lower().startswith("https://") and name == "key_directory_url":
                raise _field_error("key_directory_url must be an https URL.", name)
    return data


def registration_create(*, org: Organization, actor: str = "", ip: str = "", **data) -> Registration:
    data = registration_validate(data)
    if Agent.objects.filter(name__iexact=data["name"]).exists():
        raise Conflict(f"The name {data['name']!r} is already a registry entry's name.")
    collision = _collision(data["tokens"])
    if collision:
        raise Conflict(collision)
    with transaction.atomic():
        Organization.objects.select_for_update().filter(pk=org.pk).first()
        held = Registration.objects.filter(org=org).exclude(status=Registration.WITHDRAWN).count()
        if held >= constants.REGISTRATIONS_MAX:
            raise TooManyRequests(f"The organization already has {constants.REGISTRATIONS_MAX} registrations; withdraw one first.",
                                  retry_after=86400)
        registration = Registration.objects.create(
            id=new_id("areg_"), org=org, name=data["name"], operator=data["operator"], domain=data["domain"],
            tokens=data["tokens"], purpose=data.get("purpose") or "other", user_agent=data.get("user_agent") or "",
            description=data.get("description") or "", policy_url=data.get("policy_url") or "",
            key_directory_url=data.get("key_directory_url") or "", follows_robots_txt=data.get("follows_robots_txt"),
            proof_value=domains.proof_value_new(), created_at=clock.now(),
        )
        audit_record(org=org, action="atlas.registration.created", actor=actor, target=registration.id,
                     data={"name": registration.name, "domain": registration.domain}, ip=ip)
    return registration


def registration_list(*, org: Organization) -> list[Registration]:
    return list(Registration.objects.filter(org=org).order_by("-created_at", "-id"))


def registration_get(*, org: Organization, registration_id: str) -> Registration:
    registration = None
    if is_valid_id(registration_id, "areg_"):
        registration = Registration.objects.filter(org=org, id=registration_id).first()
    if registration is None:
        raise NotFound("No registration with this id in this organization.")
    return registration


def _entry_from_registration(registration: Registration) -> Agent:
    base = slugify(registration.name)[:70] or "agent"
    slug, n = base, 2
    while Agent.objects.filter(slug=slug).exists():
        slug = f"{base}-{n}"
        n += 1
    directory = ""
    if registration.key_directory_ok and registration.key_directory_url:
        directory = webbotauth.directory_url(registration.key_directory_url)
    purpose = registration.purpose
    kind = {"user_fetch": "fetcher", "browser_agent": "agent", "coding_agent": "agent", "api_agent": "agent"}.get(purpose, "crawler")
    description = registration.description or (
        f"{registration.name} is a self-registered {kind} ({constants.PURPOSES[purpose].lower()}) of {registration.operator}, "
        f"whose control of {registration.domain} was proven.")
    return Agent.objects.create(
        slug=slug, name=registration.name, operator=registration.operator, operator_url=f"https://{registration.domain}",
        purpose=purpose, kind=kind, user_agents=registration.user_agent or f"{registration.tokens[0]}/1.0",
        user_agent_tokens=list(registration.tokens), web_bot_auth_key_directory=directory,
        verification="web_bot_auth" if directory else "user_agent_only", follows_robots_txt=registration.follows_robots_txt,
        description=description, docs_url=registration.policy_url,
        sources=[{"source": "registration", "title": f"Self-registration {registration.id}", "url": f"https://{registration.domain}",
                  "license": "Published with the registrant's consent given at registration",
                  "date": clock.now().date().isoformat(), "fields": ["all"], "proof": registration.proof_method}],
        registration=registration,
    )


def _publish(registration: Registration, *, actor: str, ip: str) -> None:
    _entry_from_registration(registration)
    registration.status = Registration.PUBLISHED
    registration.note = ""
    registration.save()
    audit_record(org=registration.org, action="atlas.registration.published", actor=actor, target=registration.id, ip=ip)
    webhook_emit(org=registration.org, type="atlas.registration.published",
                 data={"id": registration.id, "name": registration.name, "status": registration.status})
    transaction.on_commit(registry_changed)


def registration_verify(*, org: Organization, registration_id: str, actor: str = "", ip: str = "") -> Registration:
    """Check the domain proof: published, or held for review when the operator name is already another's."""
    registration = registration_get(org=org, registration_id=registration_id)
    if registration.status in (Registration.WITHDRAWN, Registration.REJECTED):
        raise Conflict(f"The registration is {registration.status}; it cannot be verified.")
    if registration.status in (Registration.PUBLISHED, Registration.PENDING_REVIEW):
        return registration  # already verified: the same answer again
    collision = _collision(registration.tokens)
    if collision:
        raise Conflict(collision)
    found = domains.proof_found(registration.domain, [registration.proof_value])
    if found is None:
        raise Unprocessable(f"The value was not found at _svc-atlas.{registration.domain} (DNS TXT) nor at "
                            f"https://{registration.domain}/.well-known/svc-atlas.txt.")
    directory_ok = False
    if registration.key_directory_url:
        keys, _error = webbotauth.directory_keys(webbotauth.directory_url(registration.key_directory_url), refresh=True)
        directory_ok = bool(keys)
    taken = (Agent.objects.filter(operator__iexact=registration.operator)
             .exclude(registration__org=org).exists())
    try:
        with transaction.atomic():
            row = Registration.objects.select_for_update().get(pk=registration.pk)
            if row.status != Registration.PENDING_VERIFICATION:
                return row
            row.proof_method, row.key_directory_ok, row.verified_at = found[0], directory_ok, clock.now()
            audit_record(org=org, action="atlas.registration.verified", actor=actor, target=row.id,
                         data={"method": found[0], "key_directory_ok": directory_ok}, ip=ip)
            if taken:
                row.status = Registration.PENDING_REVIEW
                row.note = f"The operator name {row.operator!r} is already listed by another party; held for review."
                row.save()
                webhook_emit(org=org, type="atlas.registration.pending_review",
                             data={"id": row.id, "name": row.name, "status": row.status})
            else:
                _publish(row, actor=actor, ip=ip)
    except IntegrityError:
        raise Conflict("The registration collides with an entry published meanwhile.") from None
    return row


def registration_withdraw(*, org: Organization, registration_id: str, actor: str = "", ip: str = "") -> Registration:
    registration = registration_get(org=org, registration_id=registration_id)
    if registration.status == Registration.WITHDRAWN:
        return registration
    with transaction.atomic():
        removed, _ = Agent.objects.filter(registration=registration).delete()
        registration.status = Registration.WITHDRAWN
        registration.save()
        audit_record(org=org, action="atlas.registration.withdrawn", actor=actor, target=registration.id, ip=ip)
        if removed:
            transaction.on_commit(registry_changed)
    return registration


def registration_approve(*, registration: Registration, reviewer: str = "") -> Registration:
    """Review console: a held registration is published."""
    if registration.status != Registration.PENDING_REVIEW:
        raise Conflict(f"Only a registration held for review can be approved; this one is {registration.status}.")
    collision = _collision(registration.tokens)
    if collision:
        raise Conflict(collision)
    with transaction.atomic():
        _publish(registration, actor=f"review:{reviewer}", ip="")
    return registration


def registration_reject(*, registration: Registration, reviewer: str = "", note: str = "") -> Registration:
    if registration.status != Registration.PENDING_REVIEW:
        raise Conflict(f"Only a registration held for review can be rejected; this one is {registration.status}.")
    registration.status = Registration.REJECTED
    registration.note = note or "Rejected on review."
    registration.save()
    audit_record(org=registration.org, action="atlas.registration.rejected", actor=f"review:{reviewer}",
                 target=registration.id, data={"note": registration.note})
    return registration


def registration_out(registration: Registration) -> dict:
    body = {
        "id": registration.id, "status": registration.status, "name": registration.name, "operator": registration.operator,
        "domain": registration.domain, "tokens": list(registration.tokens), "purpose": registration.purpose,
        "user_agent": registration.user_agent or None, "description": registration.description or None,
        "policy_url": registration.policy_url or None, "key_directory_url": registration.key_directory_url or None,
        "key_directory_ok": registration.key_directory_ok, "follows_robots_txt": registration.follows_robots_txt,
        "note": registration.note or None, "created_at": registration.created_at.isoformat(),
        "verified_at": registration.verified_at.isoformat() if registration.verified_at else None,
    }
    if registration.status == Registration.PENDING_VERIFICATION:
        instructions = domains.proof_instructions(registration.domain, registration.proof_value)
        body["verification"] = {k: instructions[k] for k in ("value", "dns", "http")}
    if registration.status == Registration.PUBLISHED:
        entry = Agent.objects.filter(registration=registration).first()
        body["agent"] = entry_public(entry) if entry else None
    return body


# Sightings and traffic -------------------------------------------------------------------------


def _sighting_signature(entry: dict, *, method: str, url: str, headers: dict) -> int | None:
    """1 when the request's Web Bot Auth signature verifies against the entry's cached directory, 0 when it is
    invalid, None when it cannot be told here (no signature, no cached keys: a sighting never fetches)."""
    from atlas.models import KeyDirectory

    if not entry["web_bot_auth_key_directory"] or not any(name.lower() == "signature" for name in headers):
        return None
    directory = webbotauth.directory_url(entry["web_bot_auth_key_directory"])
    row = KeyDirectory.objects.filter(url=directory).first()
    if row is None or not row.keys:
        return None
    outcome = webbotauth.verify_request(method=method, url=url, headers=headers,
                                        keys={(directory, keyid): jwk for keyid, jwk in row.keys.items()})
    if outcome.outcome == "verified" and outcome.directory == directory:
        return 1
    return 0 if outcome.outcome == "invalid" else None


def sighting_record(*, user_agent: str, ip: str | None = None, headers: dict | None = None, method: str = "GET",
                    url: str = "", day=None) -> str | None:
    """Count a request to this service that claims a registry agent, verified where possible (its Web Bot Auth
    signature against a cached directory, or its address in the operator's published ranges). Stores the agent
    and the day only, never the address. Returns the slug counted, or None."""
    if not user_agent:
        return None
    snap = snapshot()
    match = snap.matcher.best(user_agent[: constants.LOOKUP_MAX_CHARS]).get(AGENT)
    if match is None:
        return None
    entry = snap.entries[match.key]
    verified = failed = 0
    signed = _sighting_signature(entry, method=method, url=url, headers=headers) if headers else None
    if signed is not None:
        verified, failed = signed, 1 - signed
    elif ip and entry["_ip_lists"]:
        try:
            address = ipcheck.parse_ip(ip)
        except ValueError:
            address = None
        if address is not None:
            if _ip_in_lists(address, entry["_ip_lists"], snap):
                verified = 1
            else:
                failed = 1
    day = day or clock.now().date()
    rows = Sighting.objects.filter(day=day, agent_slug=match.key)
    if not rows.update(requests=F("requests") + 1, verified=F("verified") + verified, failed=F("failed") + failed):
        Sighting.objects.bulk_create([Sighting(day=day, agent_slug=match.key)], ignore_conflicts=True)
        rows.update(requests=F("requests") + 1, verified=F("verified") + verified, failed=F("failed") + failed)
    return match.key


def sightings_list(*, days: int, agent: str = "", keyed: bool) -> dict:
    cap = constants.SIGHTINGS_DAYS_KEYED if keyed else constants.SIGHTINGS_DAYS_KEYLESS
    if days > cap:
        raise BadRequest(f"days may be at most {cap} {'with' if keyed else 'without'} a key.")
    today = clock.now().date()
    since = today - timedelta(days=days - 1)
    rows = Sighting.objects.filter(day__gte=since)
    if agent:
        rows = rows.filter(agent_slug=agent)
    names = dict(Agent.objects.values_list("slug", "name"))
    items = [{"day": row.day.isoformat(), "agent": row.agent_slug, "name": names.get(row.agent_slug, row.agent_slug),
              "requests": row.requests, "verified": row.verified, "failed_verification": row.failed}
             for row in rows.order_by("-day", "agent_slug")]
    return {"since": since.isoformat(), "until": today.isoformat(), "days": days, "sightings": items}


def traffic_report_build() -> dict | None:
    """The report over the whole observed period (nightly task); None when nothing was sighted."""
    from atlas.models import TrafficReport

    rows = list(Sighting.objects.all())
    if not rows:
        return None
    purposes = dict(Agent.objects.values_list("slug", "purpose"))
    names = dict(Agent.objects.values_list("slug", "name"))
    total = sum(row.requests for row in rows)
    per_agent: dict[str, dict] = {}
    per_purpose: dict[str, int] = {}
    for row in rows:
        item = per_agent.setdefault(row.agent_slug, {"agent": row.agent_slug, "name": names.get(row.agent_slug, row.agent_slug),
                                                     "requests": 0, "verified": 0, "failed_verification": 0, "days": 0})
        item["requests"] += row.requests
        item["verified"] += row.verified
        item["failed_verification"] += row.failed
        item["days"] += 1
        purpose = purposes.get(row.agent_slug, "other")
        per_purpose[purpose] = per_purpose.get(purpose, 0) + row.requests
    agents = sorted(per_agent.values(), key=lambda item: (-item["requests"], item["agent"]))
    for item in agents:
        item["share"] = round(item["requests"] / total, 6)
    body = {
        "period": {"from": min(r.day for r in rows).isoformat(), "to": max(r.day for r in rows).isoformat()},
        "requests": total, "agents": agents,
        "by_purpose": [{"purpose": p, "requests": n, "share": round(n / total, 6)} for p, n in sorted(per_purpose.items(), key=lambda x: -x[1])],
        "built_at": clock.now().isoformat(),
    }
    TrafficReport.objects.create(built_at=clock.now(), body=body)
    TrafficReport.objects.exclude(pk__in=TrafficReport.objects.order_by("-built_at").values("pk")[:7]).delete()
    return body


def traffic_get() -> dict:
    from atlas.models import TrafficReport

    if not Sighting.objects.exists():
        raise NotFound("No sightings have been recorded yet, so there is no traffic report.")
    report = TrafficReport.objects.order_by("-built_at").first()
    return report.body if report is not None else traffic_report_build()


# Subscription (the Atlas tier, bought through billing).


def subscription_status(*, org: Organization) -> dict:
    """The organization's Atlas tier, its limits, today's lookups, and the Stripe subscription behind it."""
    tier = billing_constants.ATLAS_TIERS.get(org.atlas_tier, billing_constants.ATLAS_TIERS["free"])
    today = clock.now().date()
    used = (Allowance.objects.filter(subject=metering.subject_of(org, ""), meter="atlas_lookups", day=today)
            .values_list("used", flat=True).first() or 0)
    live = billing.subscription_current(org=org, product="atlas")
    subscription = None
    if live is not None:
        ends = live.cancels_at or live.current_period_end
        subscription = {"plan": live.plan, "status": live.status, "cancel_at_period_end": live.cancel_at_period_end,
                        "current_period_end": live.current_period_end.isoformat() if live.current_period_end else None,
                        "cancels_at": ends.isoformat() if live.cancel_at_period_end and ends else None}
    return {
        "tier": tier.id,
        "limits": {"daily_lookup_limit": tier.daily_lookup_limit, "full_registry": tier.full_registry,
                   "downloads": tier.downloads, "internal_redistribution": tier.internal_redistribution},
        "lookups_today": {"used": used, "limit": tier.daily_lookup_limit, "remaining": max(0, tier.daily_lookup_limit - used)},
        "subscription": subscription,
        "billing_enabled": bool(settings.BILLING_ENABLED),
    }


def subscription_checkout(*, org: Organization, plan: str, success_url: str | None = None, cancel_url: str | None = None) -> dict:
    """A Stripe Checkout page for the tier `plan` (pro or team), or, with a live tier, the switch in place."""
    if not settings.BILLING_ENABLED:
        raise ServiceUnavailable("Billing is not enabled on this service.")
    return billing.checkout_create(org=org, product="atlas", plan=plan, success_url=success_url, cancel_url=cancel_url, switch=True)


def subscription_cancel(*, org: Organization) -> dict:
    """Schedule the Atlas subscription to end with its period; 409 without one."""
    if not settings.BILLING_ENABLED:
        raise ServiceUnavailable("Billing is not enabled on this service.")
    return billing.subscription_cancel(org=org, product="atlas")
