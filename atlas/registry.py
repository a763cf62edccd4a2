"""The registry as lookups read it: one in-process snapshot (matcher, entries, IP indexes) per registry version.

Every change to an entry or an IP list calls `registry_changed()`, which stores a new version in the
shared cache (Redis in production). A process looks at that version at most every
ATLAS_REGISTRY_RECHECK_SECONDS and rebuilds its snapshot when it moved, or at the latest after
ATLAS_REGISTRY_MAX_AGE_SECONDS (a version lost to a cache flush or eviction is then noticed too).
"""

import threading
import time
import uuid
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

from atlas import constants
from atlas.ipcheck import RangeIndex
from atlas.matcher import AGENT, CONTROL, GENERIC, Matcher

VERSION_KEY = "atlas:registry:version"
_lock = threading.Lock()
_local: dict = {"version": None, "snapshot": None, "checked": 0.0, "built": 0.0}
_range_indexes: dict[tuple[str, object], RangeIndex] = {}  # (list id, updated_at) -> index: rebuilt only on change


@dataclass
class Snapshot:
    matcher: Matcher
    entries: dict[str, dict]  # slug -> public fields
    generic: dict[str, dict]  # lowered token -> generic client
    ranges: dict[str, RangeIndex]  # list id -> index
    lists: dict[str, dict]  # list id -> {id, operator, label, upstream_url, creation_time, fetched_at, prefixes}


def registry_changed() -> None:
    cache.set(VERSION_KEY, uuid.uuid4().hex, timeout=None)
    forget_local()


def registry_touched(**_kwargs) -> None:
    """Signal receiver for entries and IP lists: a new version now, and again once the change is committed
    (a process that rebuilt in between, from what was committed then, rebuilds once more)."""
    from django.db import transaction

    registry_changed()
    transaction.on_commit(registry_changed)


def forget_local() -> None:
    """Drop this process's snapshot (the next lookup rebuilds it)."""
    with _lock:
        _local.update(version=None, snapshot=None, checked=0.0, built=0.0)


def entry_public(agent) -> dict:
    """The public fields of a registry entry (everyone sees these)."""
    return {
        "slug": agent.slug,
        "agent": agent.name,
        "operator": agent.operator or None,
        "operator_url": agent.operator_url or None,
        "category": constants.PURPOSES.get(agent.purpose, agent.purpose),
        "purpose": agent.purpose,
        "kind": agent.kind,
        "user_agents": agent.user_agents,
        "user_agent_tokens": list(agent.user_agent_tokens),
        "robots_txt_token": agent.robots_txt_token or None,
        "web_bot_auth_key_directory": agent.web_bot_auth_key_directory or None,
        "verification": agent.verification,
        "verification_label": constants.VERIFICATION.get(agent.verification, agent.verification),
        "follows_robots_txt": agent.follows_robots_txt,
        "respects_robots_txt": agent.respects_robots_txt,
        "description": agent.description,
        "docs_url": agent.docs_url or None,
        "sources": list(agent.sources),
        "self_registered": agent.registration_id is not None,
        "updated_at": agent.updated_at.isoformat() if agent.updated_at else None,
    }


def _build() -> Snapshot:
    from atlas.models import Agent, IpRangeList
    from atlas.seed import seed_build

    tokens: list[tuple[str, str, str]] = []
    entries = {}
    for agent in Agent.objects.all():
        entry = entry_public(agent)
        entry["_ip_lists"] = list(agent.ip_lists)
        entry["_rdns_suffixes"] = list(agent.rdns_suffixes)
        entries[agent.slug] = entry
        if agent.kind == "control_token":
            if agent.robots_txt_token:
                tokens.append((agent.robots_txt_token, CONTROL, agent.slug))
            continue
        tokens.extend((token, AGENT, agent.slug) for token in agent.user_agent_tokens)
    generic = {}
    for client in seed_build()[1]:
        generic[client["token"].lower()] = client
        tokens.append((client["token"], GENERIC, client["token"].lower()))
    ranges, lists = {}, {}
    for row in IpRangeList.objects.all():
        key = (row.id, row.updated_at)
        if key not in _range_indexes:
            _range_indexes[key] = RangeIndex.build(row.prefixes)
        ranges[row.id] = _range_indexes[key]
        lists[row.id] = {"id": row.id, "operator": row.operator, "label": row.label, "upstream_url": row.upstream_url,
                         "creation_time": row.creation_time or None, "prefixes": len(row.prefixes),
                         "fetched_at": row.fetched_at.isoformat() if row.fetched_at else None, "origin": row.origin}
    return Snapshot(Matcher(tokens), entries, generic, ranges, lists)


def snapshot() -> Snapshot:
    """The current snapshot, rebuilt when the shared version moved (checked at most every few seconds)."""
    now = time.monotonic()
    current = _local["snapshot"]
    recheck = settings.ATLAS_REGISTRY_RECHECK_SECONDS
    max_age = settings.ATLAS_REGISTRY_MAX_AGE_SECONDS
    if current is not None and now - _local["checked"] < recheck and now - _local["built"] < max_age:
        return current
    version = cache.get(VERSION_KEY)
    if version is None:  # never set, or flushed: adopt ours (or a fresh one) rather than rebuild on every miss
        version = _local["version"] or uuid.uuid4().hex
        if not cache.add(VERSION_KEY, version, timeout=None):
            version = cache.get(VERSION_KEY) or version
    with _lock:
        if (_local["snapshot"] is not None and _local["version"] == version
                and now - _local["built"] < max_age):
            _local["checked"] = now
            return _local["snapshot"]
        built = _build()
        _local.update(snapshot=built, version=version, checked=now, built=now)
        return built
