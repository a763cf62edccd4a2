"""Prefixed public identifiers: `eval_`, `areg_`, `bcn_`… followed by 16 URL-safe characters."""

import re
import secrets
import string

ID_ALPHABET = string.ascii_letters + string.digits + "_-"
ID_LENGTH = 16


def new_id(prefix: str) -> str:
    """A random id such as `eval_Xy3…` (96 bits of randomness)."""
    return prefix + "".join(secrets.choice(ID_ALPHABET) for _ in range(ID_LENGTH))


def id_pattern(prefix: str) -> re.Pattern:
    return re.compile(rf"^{re.escape(prefix)}[A-Za-z0-9_-]{{{ID_LENGTH}}}$")


def is_valid_id(value: str, prefix: str) -> bool:
    return isinstance(value, str) and bool(id_pattern(prefix).match(value))
