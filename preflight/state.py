"""Reading account state: SPL Token / Token-2022 token accounts, byte by byte.

Token account layout (165 bytes, little endian; Token-2022 keeps it and appends extensions):
0 mint | 32 owner | 64 amount u64 | 72 delegate COption<Pubkey> (u32 tag + 32) | 108 state u8 |
109 is_native COption<u64> (u32 tag + 8) | 121 delegated_amount u64 | 129 close_authority COption<Pubkey>.
A Token-2022 account longer than 165 bytes has AccountType 2 at byte 165; 355 bytes is a multisig.
"""

import struct
from dataclasses import dataclass

from solders.account import Account
from solders.pubkey import Pubkey

from preflight.constants import TOKEN_PROGRAMS

TOKEN_ACCOUNT_BYTES = 165
MULTISIG_BYTES = 355
ACCOUNT_TYPE_ACCOUNT = 2


@dataclass(frozen=True)
class TokenState:
    mint: Pubkey
    owner: Pubkey
    amount: int
    delegate: Pubkey | None
    delegated_amount: int
    close_authority: Pubkey | None
    is_native: bool
    program: Pubkey


def _option_key(data: bytes, offset: int) -> Pubkey | None:
    return Pubkey.from_bytes(data[offset + 4 : offset + 36]) if struct.unpack_from("<I", data, offset)[0] == 1 else None


def token_state(account: Account | None) -> TokenState | None:
    """The token account in `account`, or None when it is not an initialized token account."""
    if account is None or account.owner not in TOKEN_PROGRAMS:
        return None
    data = bytes(account.data)
    if len(data) < TOKEN_ACCOUNT_BYTES or len(data) == MULTISIG_BYTES:
        return None
    if len(data) > TOKEN_ACCOUNT_BYTES and data[TOKEN_ACCOUNT_BYTES] != ACCOUNT_TYPE_ACCOUNT:
        return None  # a Token-2022 mint with extensions
    if data[108] == 0:  # uninitialized
        return None
    return TokenState(
        mint=Pubkey.from_bytes(data[0:32]),
        owner=Pubkey.from_bytes(data[32:64]),
        amount=struct.unpack_from("<Q", data, 64)[0],
        delegate=_option_key(data, 72),
        delegated_amount=struct.unpack_from("<Q", data, 121)[0],
        close_authority=_option_key(data, 129),
        is_native=struct.unpack_from("<I", data, 109)[0] == 1,
        program=account.owner,
    )


def exists(account: Account | None) -> bool:
    """An account with no lamports is gone (closed, or never created)."""
    return account is not None and account.lamports > 0
