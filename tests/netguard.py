"""The test network guard: no packet leaves loopback.

Every socket connect/send to an address outside 127.0.0.0/8 and ::1, and every name resolution
of a name that is neither an IP literal, `localhost`, nor registered with `fake_dns`, is refused
and recorded; the autouse fixture fails the test on any record, even when the code under test
swallowed the exception.
"""

import ipaddress
import socket
import threading

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_sendto = socket.socket.sendto
_real_getaddrinfo = socket.getaddrinfo

attempts: list[str] = []
fake_names: dict[str, list[str]] = {}
_lock = threading.Lock()


class NetworkBlocked(OSError):
    """Raised instead of sending a packet off loopback (an OSError, so clients treat it as a failed connect)."""


def _is_loopback(host) -> bool:
    try:
        address = ipaddress.ip_address(str(host).split("%")[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return address.is_loopback


def _check(sock, address) -> None:
    if sock.family == getattr(socket, "AF_UNIX", None):
        return
    host = address[0] if isinstance(address, tuple) else address
    if not _is_loopback(host):
        with _lock:
            attempts.append(f"connect to {address!r}")
        raise NetworkBlocked(f"test network guard: refused to reach {address!r} (only loopback is allowed)")


def _connect(self, address):
    _check(self, address)
    return _real_connect(self, address)


def _connect_ex(self, address):
    _check(self, address)
    return _real_connect_ex(self, address)


def _sendto(self, data, *args):
    address = args[-1]
    _check(self, address)
    return _real_sendto(self, data, *args)


def _getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
    name = host.decode() if isinstance(host, bytes) else host
    if name is None or _is_loopback(name) or name in ("localhost", "localhost.", "ip6-localhost"):
        return _real_getaddrinfo(host, port, family, type, proto, flags)
    try:
        ipaddress.ip_address(str(name).split("%")[0])
        return _real_getaddrinfo(host, port, family, type, proto, flags | socket.AI_NUMERICHOST)
    except ValueError:
        pass
    key = str(name).lower().rstrip(".")
    if key in fake_names:
        results = []
        for ip in fake_names[key]:
            fam = socket.AF_INET6 if ":" in ip else socket.AF_INET
            if family not in (0, socket.AF_UNSPEC, fam):
                continue
            sockaddr = (ip, port or 0, 0, 0) if fam == socket.AF_INET6 else (ip, port or 0)
            results.append((fam, type or socket.SOCK_STREAM, proto or 6, "", sockaddr))
        if not results:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return results
    with _lock:
        attempts.append(f"resolve {name!r}")
    raise socket.gaierror(socket.EAI_NONAME, f"test network guard: refused to resolve {name!r}")


def install() -> None:
    socket.socket.connect = _connect
    socket.socket.connect_ex = _connect_ex
    socket.socket.sendto = _sendto
    socket.getaddrinfo = _getaddrinfo


def take_attempts() -> list[str]:
    with _lock:
        found = list(attempts)
        attempts.clear()
    return found
