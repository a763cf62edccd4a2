"""Decoding a posted transaction: base64 of a legacy or v0 Solana transaction, signed or not.

Every way the bytes can be wrong is a BadRequest naming what is wrong; nothing here simulates.
Signatures are ignored: the transaction is rebuilt with zero signatures, one per required signer,
so a signed and an unsigned copy of the same message are the same check (and the same digest).
"""

import base64
import binascii
import hashlib
import struct
from dataclasses import dataclass

from solders.account import Account
from solders.address_lookup_table_account import AddressLookupTable
from solders.message import Message, MessageV0, to_bytes_versioned
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.transaction import VersionedTransaction

from core.errors import BadRequest
from preflight import constants

LOOKUP_TABLE_META_BYTES = 56


@dataclass(frozen=True)
class Lookup:
    """One address-table lookup of a v0 message."""

    table: Pubkey
    writable_indexes: tuple[int, ...]
    readonly_indexes: tuple[int, ...]


@dataclass(frozen=True)
class Decoded:
    """A decoded transaction: the message, its header numbers and the digest of its bytes."""

    transaction: VersionedTransaction  # the message with zero signatures, as simulated
    message: Message | MessageV0
    version: str  # "legacy" or "v0"
    static_keys: tuple[Pubkey, ...]
    num_signers: int
    num_readonly_signed: int
    num_readonly_unsigned: int
    lookups: tuple[Lookup, ...]
    message_bytes: bytes

    @property
    def digest(self) -> str:
        """sha256 of the serialized message (hex): the same for every signed or unsigned copy."""
        return hashlib.sha256(self.message_bytes).hexdigest()

    @property
    def signers(self) -> tuple[Pubkey, ...]:
        return self.static_keys[: self.num_signers]

    @property
    def fee_payer(self) -> Pubkey:
        return self.static_keys[0]

    @property
    def loaded_count(self) -> int:
        return sum(len(lk.writable_indexes) + len(lk.readonly_indexes) for lk in self.lookups)

    def static_writable(self, index: int) -> bool:
        if index < self.num_signers:
            return index < self.num_signers - self.num_readonly_signed
        return index < len(self.static_keys) - self.num_readonly_unsigned

    def unresolved_programs(self) -> list[tuple[int, int]]:
        """(instruction index, program index) for each instruction whose program is not a static key.

        Program ids must be static keys (a v0 message cannot load a program from a lookup table).
        """
        return [
            (position, ix.program_id_index)
            for position, ix in enumerate(self.message.instructions)
            if ix.program_id_index >= len(self.static_keys)
        ]

    def top_level_program_indexes(self) -> list[int]:
        return [ix.program_id_index for ix in self.message.instructions]

    def durable_nonce_account(self) -> Pubkey | None:
        """The nonce account when instruction 0 is System AdvanceNonceAccount (the transaction never expires)."""
        instructions = self.message.instructions
        if not instructions:
            return None
        first = instructions[0]
        if first.program_id_index >= len(self.static_keys):
            return None
        if str(self.static_keys[first.program_id_index]) != constants.SYSTEM_PROGRAM:
            return None
        data = bytes(first.data)
        if len(data) < 4 or struct.unpack_from("<I", data)[0] != 4 or not first.accounts:
            return None
        index = first.accounts[0]
        return self.static_keys[index] if index < len(self.static_keys) else None


def _bad(message: str) -> BadRequest:
    return BadRequest(f"transaction: {message}")


def decode_transaction(text: str) -> Decoded:
    """Decode base64 transaction bytes; raise BadRequest saying what is wrong."""
    compact = "".join(text.split())
    if not compact:
        raise _bad("is empty; send the serialized transaction in base64.")
    if len(compact) > constants.MAX_TRANSACTION_CHARS:
        raise _bad(f"is longer than a Solana transaction can be ({constants.MAX_TRANSACTION_BYTES} bytes).")
    try:
        raw = base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        raise _bad("is not valid base64.") from None
    if len(raw) > constants.MAX_TRANSACTION_BYTES:
        raise _bad(f"is {len(raw)} bytes; a Solana transaction is at most {constants.MAX_TRANSACTION_BYTES}.")
    try:
        transaction = VersionedTransaction.from_bytes(raw)
    except BaseException as exc:  # noqa: BLE001 - solders raises ValueError, or a pyo3 PanicException on odd input
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        reason = str(exc).strip().rstrip(".") or type(exc).__name__
        raise _bad(f"is not a Solana transaction ({reason[:200]}).") from None
    message = transaction.message
    if isinstance(message, MessageV0):
        version = "v0"
    elif isinstance(message, Message):
        version = "legacy"
    else:
        raise _bad("uses a message version this service does not read; send a legacy or v0 transaction.")
    if len(bytes(transaction)) != len(raw):
        raise _bad("has bytes after the end of the transaction.")
    return _checked(transaction, message, version)


def _checked(transaction: VersionedTransaction, message, version: str) -> Decoded:
    header = message.header
    keys = tuple(message.account_keys)
    nsig = header.num_required_signatures
    ro_signed = header.num_readonly_signed_accounts
    ro_unsigned = header.num_readonly_unsigned_accounts
    if nsig < 1:
        raise _bad("requires no signature; a transaction needs at least its fee payer's.")
    if nsig > len(keys):
        raise _bad(f"requires {nsig} signatures but lists only {len(keys)} accounts.")
    if ro_signed >= nsig:
        raise _bad("makes its fee payer read-only; the fee payer must be writable.")
    if nsig + ro_unsigned > len(keys):
        raise _bad("has a header that marks more accounts read-only than it lists.")
    if len(set(keys)) != len(keys):
        raise _bad("lists the same account twice.")
    lookups: list[Lookup] = []
    if version == "v0":
        tables = set()
        for lookup in message.address_table_lookups:
            if lookup.account_key in tables:
                raise _bad(f"uses lookup table {lookup.account_key} twice.")
            tables.add(lookup.account_key)
            entry = Lookup(lookup.account_key, tuple(lookup.writable_indexes), tuple(lookup.readonly_indexes))
            if not entry.writable_indexes and not entry.readonly_indexes:
                raise _bad(f"uses lookup table {lookup.account_key} without loading any address from it.")
            lookups.append(entry)
    total = len(keys) + sum(len(lk.writable_indexes) + len(lk.readonly_indexes) for lk in lookups)
    if total > 256:
        raise _bad(f"names {total} accounts; a message can name at most 256.")
    if not message.instructions:
        raise _bad("has no instructions.")
    for position, ix in enumerate(message.instructions):
        for index in ix.accounts:
            if index >= total:
                raise _bad(f"instruction {position} names account {index}, but the message has {total} accounts.")
    unsigned = VersionedTransaction.populate(message, [Signature.default()] * nsig)
    return Decoded(
        transaction=unsigned,
        message=message,
        version=version,
        static_keys=keys,
        num_signers=nsig,
        num_readonly_signed=ro_signed,
        num_readonly_unsigned=ro_unsigned,
        lookups=tuple(lookups),
        message_bytes=bytes(to_bytes_versioned(message)),
    )


class LookupTableUnreadable(Exception):
    """A lookup table is missing, not a lookup table, deactivated or too short for an index asked."""


@dataclass(frozen=True)
class ResolvedKeys:
    """The full key list (static, then loaded writable, then loaded read-only) and which are writable."""

    keys: tuple[Pubkey, ...]
    writable: tuple[bool, ...]

    def writable_keys(self) -> list[Pubkey]:
        return [key for key, writable in zip(self.keys, self.writable, strict=True) if writable]


def resolve_keys(decoded: Decoded, tables: dict[Pubkey, Account | None], *, slot: int) -> ResolvedKeys:
    """Resolve the lookups against the table accounts read at `slot`; raise LookupTableUnreadable."""
    program_indexes = set(decoded.top_level_program_indexes())
    # The runtime demotes program ids to read-only; they are never written to.
    writable = [decoded.static_writable(i) and i not in program_indexes for i in range(len(decoded.static_keys))]
    loaded_writable: list[Pubkey] = []
    loaded_readonly: list[Pubkey] = []
    for lookup in decoded.lookups:
        addresses = _active_addresses(lookup.table, tables.get(lookup.table), slot=slot)
        for index in (*lookup.writable_indexes, *lookup.readonly_indexes):
            if index >= len(addresses):
                raise LookupTableUnreadable(
                    f"lookup table {lookup.table} has {len(addresses)} active addresses; index {index} was asked."
                )
        loaded_writable += [addresses[i] for i in lookup.writable_indexes]
        loaded_readonly += [addresses[i] for i in lookup.readonly_indexes]
    keys = (*decoded.static_keys, *loaded_writable, *loaded_readonly)
    writable += [True] * len(loaded_writable) + [False] * len(loaded_readonly)
    return ResolvedKeys(keys=keys, writable=tuple(writable))


def _active_addresses(table: Pubkey, account: Account | None, *, slot: int) -> list[Pubkey]:
    if account is None:
        raise LookupTableUnreadable(f"lookup table {table} does not exist.")
    if str(account.owner) != constants.LOOKUP_TABLE_PROGRAM:
        raise LookupTableUnreadable(f"account {table} is not a lookup table (its owner is {account.owner}).")
    data = bytes(account.data)
    if len(data) < LOOKUP_TABLE_META_BYTES or (len(data) - LOOKUP_TABLE_META_BYTES) % 32:
        raise LookupTableUnreadable(f"lookup table {table} is too short or malformed ({len(data)} bytes).")
    try:
        parsed = AddressLookupTable.deserialize(data)
    except BaseException as exc:  # noqa: BLE001 - bad bytes from a node must not crash a check
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise LookupTableUnreadable(f"lookup table {table} cannot be read.") from None
    meta = parsed.meta
    if meta.deactivation_slot != constants.U64_MAX and meta.deactivation_slot < slot:
        raise LookupTableUnreadable(f"lookup table {table} was deactivated at slot {meta.deactivation_slot}.")
    addresses = list(parsed.addresses)
    if slot <= meta.last_extended_slot:  # addresses added in the current slot are not usable yet
        addresses = addresses[: meta.last_extended_slot_start_index]
    return addresses
