"""IP verification: the operators' published ranges, and forward-confirmed reverse DNS (part of the IP method).

Ranges are held in memory as sorted integer intervals per list, so a membership test is a binary
search. FCrDNS: the address's PTR name must end in one of the operator's suffixes, and that name
must resolve forward to the same address; a PTR alone proves nothing (anyone sets their own).
"""

import bisect
import ipaddress
import logging
from dataclasses import dataclass

import dns.exception
import dns.resolver
import dns.reversename

from accounts.domains import resolver as dns_resolver  # the service's configured DNS servers and timeout

log = logging.getLogger(__name__)


@dataclass
class RangeIndex:
    """Sorted (start, end) intervals per IP version for one published list."""

    starts: dict[int, list[int]]
    ends: dict[int, list[int]]
    count: int

    @classmethod
    def build(cls, prefixes: list[str]) -> "RangeIndex":
        intervals: dict[int, list[tuple[int, int]]] = {4: [], 6: []}
        count = 0
        for prefix in prefixes:
            try:
                network = ipaddress.ip_network(str(prefix).strip(), strict=False)
            except ValueError:
                continue
            intervals[network.version].append((int(network.network_address), int(network.broadcast_address)))
            count += 1
        starts, ends = {}, {}
        for version, items in intervals.items():
            items.sort()
            merged: list[list[int]] = []
            for start, end in items:
                if merged and start <= merged[-1][1] + 1:
                    merged[-1][1] = max(merged[-1][1], end)
                else:
                    merged.append([start, end])
            starts[version] = [m[0] for m in merged]
            ends[version] = [m[1] for m in merged]
        return cls(starts, ends, count)

    def __contains__(self, address) -> bool:
        version = address.version
        value = int(address)
        position = bisect.bisect_right(self.starts[version], value) - 1
        return position >= 0 and value <= self.ends[version][position]


def parse_ip(raw: str):
    """An ip_address, with IPv4-mapped IPv6 unwrapped; ValueError when it is not an address."""
    address = ipaddress.ip_address(str(raw).strip())
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def fcrdns(ip: str, suffixes: list[str]) -> dict:
    """Forward-confirmed reverse DNS: {passed, ptr, reason}."""
    suffixes = [s.lower().strip(".") for s in suffixes if s]
    if not suffixes:
        return {"passed": False, "ptr": None, "reason": "The operator publishes no reverse-DNS names."}
    address = parse_ip(ip)
    resolver = dns_resolver()
    try:
        answer = resolver.resolve(dns.reversename.from_address(str(address)), "PTR")
        names = [str(record.target).rstrip(".").lower() for record in answer]
    except (dns.exception.DNSException, OSError):
        return {"passed": False, "ptr": None, "reason": f"{address} has no reverse-DNS (PTR) name."}
    for name in names:
        if not any(name == s or name.endswith("." + s) for s in suffixes):
            continue
        forward = set()
        for rdtype in ("A", "AAAA"):
            try:
                forward.update(str(record.address) for record in resolver.resolve(name, rdtype))
            except (dns.exception.DNSException, OSError):
                continue
        if str(address) in forward:
            return {"passed": True, "ptr": name, "reason": f"{address} reverse-resolves to {name}, which resolves back to it."}
        return {"passed": False, "ptr": name, "reason": f"{name} does not resolve back to {address}."}
    return {"passed": False, "ptr": names[0] if names else None,
            "reason": f"The reverse-DNS name of {address} is not under {', '.join(suffixes)}."}
