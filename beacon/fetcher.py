"""Beacon's side of fetching: every request of a check goes through core.safe_http, counted and capped.

A `Fetcher` belongs to one check. It sends Beacon's User-Agent, caps the number of requests (a
redirect hop counts as one), the time of the whole check and the bytes of each answer, and
remembers what it fetched so that two checks needing the same URL cost one request. A failed fetch
is returned as a `Fetched` carrying `error`, never raised: a check that needed it says `error`.
"""

import threading
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

from django.conf import settings
from requests.structures import CaseInsensitiveDict

from core import safe_http

from . import constants


def user_agent() -> str:
    return f"{constants.USER_AGENT_PRODUCT} (+{settings.BASE_URL}/beacon)"


@dataclass
class Fetched:
    """One answer (or the failure to get one) as the checks read it."""

    url: str
    method: str = "GET"
    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=CaseInsensitiveDict)
    body: bytes = b""
    final_url: str = ""
    error: str | None = None
    elapsed: float = 0.0
    truncated: bool = False
    _text: str | None = None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def answered(self) -> bool:
        return self.status is not None

    @property
    def content_type(self) -> str:
        return (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()

    @property
    def text(self) -> str:
        if self._text is None:
            response = safe_http.SafeResponse(status=self.status or 0, headers=self.headers, url=self.final_url or self.url,
                                              body=self.body, elapsed=self.elapsed)
            self._text = response.text
        return self._text

    def json(self) -> Any:
        """The body as JSON, or None when it is not JSON."""
        import json

        try:
            return json.loads(self.body)
        except (ValueError, RecursionError):
            return None

    def excerpt(self, limit: int = 200) -> str:
        text = " ".join(self.text.split())
        return text[:limit] + ("…" if len(text) > limit else "")

    def evidence(self, note: str = "", *, excerpt: bool = True) -> dict:
        """The evidence entry a check shows for this fetch: URL, status, a short excerpt, a note."""
        item = {"url": self.final_url or self.url, "status": self.status}
        if self.error:
            item["error"] = self.error
        elif excerpt and self.body:
            item["excerpt"] = self.excerpt()
        if note:
            item["note"] = note
        return item


class Fetcher:
    """The requests of one check: at most `max_requests`, within `seconds`, `parallel` at a time."""

    def __init__(self, *, max_requests: int | None = None, seconds: float | None = None, parallel: int | None = None):
        self.max_requests = max_requests or settings.BEACON_MAX_REQUESTS
        self.deadline = time.monotonic() + float(seconds or settings.BEACON_CHECK_SECONDS)
        self.parallel = max(1, parallel or settings.BEACON_PARALLEL_FETCHES)
        self.log: list[dict] = []
        self._spent = 0
        self._cache: dict[tuple, Fetched] = {}
        self._lock = threading.Lock()

    @property
    def requests_made(self) -> int:
        return self._spent

    def remaining_requests(self) -> int:
        return self.max_requests - self._spent

    def fetch(self, url: str, *, method: str = "GET", accept: str = "*/*", headers: Mapping[str, str] | None = None,
              json: Any = None, max_bytes: int = constants.MAX_JSON_BYTES, truncate: bool = False,
              allow_redirects: bool = True) -> Fetched:
        """Fetch once (a repeated GET is answered from memory); failures come back as `Fetched.error`."""
        sent = {"Accept": accept, **(headers or {})}
        key = (method, url, accept, repr(json), tuple(sorted((headers or {}).items())))
        cacheable = method in ("GET", "HEAD")
        with self._lock:
            if cacheable and key in self._cache:
                return self._cache[key]
            remaining_requests = self.max_requests - self._spent
            remaining_time = self.deadline - time.monotonic()
            if remaining_requests <= 0:
                return Fetched(url=url, method=method, error=f"Not fetched: the check's budget of {self.max_requests} requests is spent.")
            if remaining_time <= 0.2:
                return Fetched(url=url, method=method, error="Not fetched: the check's time budget is spent.")
            redirects = min(settings.BEACON_MAX_REDIRECTS, remaining_requests - 1) if allow_redirects else 0
            self._spent += 1  # the first hop; redirect hops are added once known
        result = self._send(url, method=method, headers=sent, json=json, max_bytes=max_bytes, truncate=truncate,
                            redirects=redirects, allow_redirects=allow_redirects,
                            deadline=min(float(settings.BEACON_FETCH_SECONDS), remaining_time))
        with self._lock:
            self._spent += result.pop("hops", 0)
            fetched = result["fetched"]
            self.log.append({"method": method, "url": url, "status": fetched.status, "error": fetched.error,
                             "elapsed": round(fetched.elapsed, 3)})
            if cacheable:
                self._cache[key] = fetched
        return fetched

    def _send(self, url, *, method, headers, json, max_bytes, truncate, redirects, allow_redirects, deadline) -> dict:
        started = time.monotonic()
        try:
            response = safe_http.fetch(
                url, method=method, headers=headers, json=json, timeout=min(float(settings.BEACON_FETCH_SECONDS), deadline),
                deadline=deadline, max_bytes=max_bytes, truncate=truncate, allow_redirects=allow_redirects and redirects > 0,
                max_redirects=redirects, user_agent=user_agent(),
            )
        except safe_http.SafeHttpError as exc:
            hops = redirects if isinstance(exc, safe_http.TooManyRedirects) else 0
            return {"fetched": Fetched(url=url, method=method, error=exc.message, elapsed=time.monotonic() - started), "hops": hops}
        fetched = Fetched(url=url, method=method, status=response.status, headers=response.headers, body=response.body,
                          final_url=response.url, elapsed=response.elapsed, truncated=response.truncated)
        return {"fetched": fetched, "hops": len(response.history)}

    def answers(self) -> list[Fetched]:
        """Every GET or HEAD answer fetched so far."""
        with self._lock:
            return list(self._cache.values())

    def fetch_many(self, jobs: Iterable[tuple[str, dict]]) -> list[Fetched]:
        """Several fetches, `parallel` at a time, answers in the order asked."""
        jobs = list(jobs)
        if self.parallel == 1 or len(jobs) < 2:
            return [self.fetch(url, **options) for url, options in jobs]
        with ThreadPoolExecutor(max_workers=min(self.parallel, len(jobs))) as pool:
            futures = [pool.submit(self.fetch, url, **options) for url, options in jobs]
            return [future.result() for future in futures]


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def absolute(base: str, href: str) -> str:
    return urljoin(base, href.strip())


def same_site(url: str, site: str) -> bool:
    """Whether `url` is on the site's host or one of its subdomains (or the other way round)."""
    host = (urlsplit(url).hostname or "").lower()
    site_host = (urlsplit(site).hostname or "").lower()
    if not host or not site_host:
        return False
    base = site_host.removeprefix("www.")
    return host == site_host or host.endswith("." + base) or host == base
