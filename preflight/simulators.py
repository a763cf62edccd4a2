"""Simulators behind one interface: a Solana JSON-RPC node, or LiteSVM in-process (the default).

A simulator reads accounts (`accounts`) and runs a transaction without sending it (`simulate`),
returning the watched accounts before and after. Nothing is ever sent to a chain: the node is only
asked `getMultipleAccounts` and `simulateTransaction` (sigVerify off), and LiteSVM is a local VM.
"""

import base64
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from solders.account import Account
from solders.litesvm import LiteSVM
from solders.pubkey import Pubkey
from solders.transaction_metadata import FailedTransactionMetadata

from core import safe_http
from core.errors import BadGateway, ServiceUnavailable
from preflight import constants
from preflight.decoding import Decoded, ResolvedKeys

GET_MULTIPLE_ACCOUNTS_MAX = 100  # the node refuses more keys in one call


class NodeUnavailable(Exception):
    """The node could not be reached or did not answer JSON-RPC: the check cannot be made (502)."""


class NodeError(Exception):
    """The node answered with a JSON-RPC error object."""

    def __init__(self, code: object, message: str):
        self.code = code
        self.message = message
        super().__init__(f"{code}: {message}")


@dataclass
class Simulation:
    """What one simulation showed about the watched accounts."""

    err: str | None = None  # the transaction error, when it would fail
    pre: dict[Pubkey, Account | None] = field(default_factory=dict)
    post: dict[Pubkey, Account | None] = field(default_factory=dict)
    missing: list[Pubkey] = field(default_factory=list)  # watched accounts the simulator did not return
    fee: int | None = None
    units_consumed: int | None = None
    inner_programs: list[Pubkey] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    slot: int | None = None


class Simulator:
    """The interface: read accounts at a slot, and simulate a decoded transaction."""

    name = "simulator"

    def accounts(self, keys: Sequence[Pubkey]) -> tuple[dict[Pubkey, Account | None], int]:
        raise NotImplementedError

    def simulate(self, decoded: Decoded, resolved: ResolvedKeys, watch: Sequence[Pubkey]) -> Simulation:
        raise NotImplementedError


# Accounts in the node's JSON shape (getMultipleAccounts / simulateTransaction, encoding base64).


def account_from_json(value: object) -> Account | None:
    """An account from `{lamports, owner, data: [b64, "base64"], executable, rentEpoch}`; ValueError if malformed."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError("an account is not an object")
    data = value.get("data")
    if not (isinstance(data, list) and len(data) == 2 and data[1] == "base64" and isinstance(data[0], str)):
        raise ValueError("an account's data is not [base64, 'base64']")
    lamports = value.get("lamports")
    if not isinstance(lamports, int) or not 0 <= lamports <= constants.U64_MAX:
        raise ValueError("an account's lamports is not a u64")
    return Account(
        lamports=lamports,
        data=base64.b64decode(data[0], validate=True),
        owner=Pubkey.from_string(str(value.get("owner"))),
        executable=bool(value.get("executable", False)),
        rent_epoch=int(value.get("rentEpoch") or 0) & constants.U64_MAX,
    )


def account_to_json(account: Account) -> dict:
    """The node's JSON shape of an account (encoding base64)."""
    return {
        "lamports": account.lamports,
        "owner": str(account.owner),
        "data": [base64.b64encode(bytes(account.data)).decode(), "base64"],
        "executable": account.executable,
        "rentEpoch": account.rent_epoch,
        "space": len(bytes(account.data)),
    }


class RpcClient:
    """JSON-RPC 2.0 over core.safe_http to one Solana node."""

    def __init__(self, url: str, *, timeout: float, commitment: str = "confirmed"):
        self.url = url
        self.timeout = timeout
        self.commitment = commitment
        self._next_id = 0

    def call(self, method: str, params: list) -> object:
        self._next_id += 1
        request = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        try:
            response = safe_http.fetch(
                self.url, method="POST", json=request, timeout=self.timeout, deadline=self.timeout * 2,
                headers={"Content-Type": "application/json"}, allow_redirects=False,
            )
        except safe_http.SafeHttpError as exc:
            raise NodeUnavailable(f"the Solana node could not be reached: {exc.message}") from None
        try:
            body = response.json()
        except ValueError:
            raise NodeUnavailable(f"the Solana node answered HTTP {response.status} without JSON.") from None
        if not isinstance(body, dict):
            raise NodeUnavailable("the Solana node answered something other than a JSON-RPC object.")
        if isinstance(body.get("error"), dict):
            error = body["error"]
            raise NodeError(error.get("code"), str(error.get("message", ""))[:300])
        if "result" not in body:
            raise NodeUnavailable(f"the Solana node answered HTTP {response.status} without a result.")
        return body["result"]

    def multiple_accounts(self, keys: Sequence[Pubkey]) -> tuple[dict[Pubkey, Account | None], int]:
        """The accounts and the slot they were read at (the lowest slot of the calls made)."""
        found: dict[Pubkey, Account | None] = {}
        slot: int | None = None
        keys = list(dict.fromkeys(keys))
        for start in range(0, len(keys), GET_MULTIPLE_ACCOUNTS_MAX):
            chunk = keys[start : start + GET_MULTIPLE_ACCOUNTS_MAX]
            params = [[str(k) for k in chunk], {"encoding": "base64", "commitment": self.commitment}]
            if slot is not None:
                params[1]["minContextSlot"] = slot
            result = self.call("getMultipleAccounts", params)
            try:
                value = result["value"]
                context_slot = int(result["context"]["slot"])
                if not isinstance(value, list) or len(value) != len(chunk):
                    raise ValueError("value is not one entry per key")
                for key, entry in zip(chunk, value, strict=True):
                    found[key] = account_from_json(entry)
            except (KeyError, TypeError, ValueError) as exc:
                raise NodeUnavailable(f"the Solana node's getMultipleAccounts answer is malformed ({exc}).") from None
            slot = context_slot if slot is None else min(slot, context_slot)
        return found, slot or 0


class RpcSimulator(Simulator):
    """simulateTransaction on a node, with pre-state from getMultipleAccounts pinned by minContextSlot.

    When the node returns `preBalances`/`postBalances` (Agave 3.0 and later) the fee payer's SOL
    before and after come from the same bank as the simulation and replace the pre-read.
    """

    name = "rpc"

    def __init__(self, client: RpcClient):
        self.client = client

    def accounts(self, keys):
        return self.client.multiple_accounts(keys)

    def simulate(self, decoded, resolved, watch):
        pre, slot = self.client.multiple_accounts(watch)
        config = {
            "encoding": "base64",
            "sigVerify": False,
            "replaceRecentBlockhash": True,
            "commitment": self.client.commitment,
            "minContextSlot": slot,
            "innerInstructions": True,
            "accounts": {"addresses": [str(k) for k in watch], "encoding": "base64"},
        }
        tx = base64.b64encode(bytes(decoded.transaction)).decode()
        try:
            result = self.client.call("simulateTransaction", [tx, config])
        except NodeError as exc:
            return Simulation(err=f"the node refused the simulation: {exc.code} {exc.message}", pre=pre, slot=slot)
        try:
            sim = self._read(result, resolved, watch, pre, slot)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise NodeUnavailable(f"the Solana node's simulateTransaction answer is malformed ({exc}).") from None
        if sim.fee is None and sim.err is None:
            sim.fee = self._fee(decoded)
        return sim

    def _fee(self, decoded: Decoded) -> int | None:
        """Nodes before Agave 3.0 leave `fee` out of a simulation: ask getFeeForMessage (informational;
        the SOL out already holds the fee, read from the fee payer's balance)."""
        message = base64.b64encode(decoded.message_bytes).decode()
        try:
            result = self.client.call("getFeeForMessage", [message, {"commitment": self.client.commitment}])
        except NodeError:
            return None
        value = result.get("value") if isinstance(result, dict) else None
        return value if isinstance(value, int) else None

    def _read(self, result, resolved, watch, pre, slot) -> Simulation:
        value = result["value"]
        sim = Simulation(pre=pre, slot=int(result.get("context", {}).get("slot") or slot))
        sim.logs = [str(line) for line in (value.get("logs") or [])]
        sim.units_consumed = value.get("unitsConsumed")
        sim.fee = value.get("fee")
        if value.get("err") is not None:
            sim.err = json.dumps(value["err"], separators=(",", ":"))
            return sim
        accounts = value.get("accounts")
        if not isinstance(accounts, list) or len(accounts) != len(watch):
            sim.missing = list(watch)
            return sim
        for key, entry in zip(watch, accounts, strict=True):
            sim.post[key] = account_from_json(entry)
        # Exact balances from the same bank, when the node gives them (indexed like the full key list).
        pre_balances, post_balances = value.get("preBalances"), value.get("postBalances")
        if isinstance(pre_balances, list) and isinstance(post_balances, list) and len(pre_balances) == len(resolved.keys):
            for index, key in enumerate(resolved.keys):
                if key in sim.pre and sim.pre[key] is not None and key in sim.post:
                    before = sim.pre[key]
                    sim.pre[key] = Account(int(pre_balances[index]), bytes(before.data), before.owner, before.executable, before.rent_epoch)
        for group in value.get("innerInstructions") or []:
            for ix in group.get("instructions") or []:
                if "programId" in ix:
                    sim.inner_programs.append(Pubkey.from_string(str(ix["programId"])))
                else:
                    sim.inner_programs.append(resolved.keys[int(ix["programIdIndex"])])
        return sim


def transaction_error_json(err: object) -> object:
    """A solders TransactionError in the node's JSON shape, e.g. {"InstructionError": [0, {"Custom": 1}]}."""
    index = getattr(err, "index", None)
    inner = getattr(err, "err", None)
    if index is not None and inner is not None:
        code = getattr(inner, "code", None)
        if code is not None:
            detail: object = {"Custom": code}
        elif hasattr(inner, "value"):
            detail = {"BorshIoError": str(inner.value)}
        else:
            detail = str(inner).rsplit(".", 1)[-1]
        return {"InstructionError": [index, detail]}
    text = str(err)
    return text.rsplit(".", 1)[-1] if "." in text and " " not in text else text


class LiteSvmSimulator(Simulator):
    """LiteSVM in-process: builtins, sysvars and the SPL programs, plus account state the operator supplies.

    With a node (`fork_from`), every account the transaction names that the operator did not supply
    is read from the node first (and the ProgramData of upgradeable programs), then simulated here.
    Unsigned transactions run as with sigVerify off and a replaced blockhash. A simulation never
    commits, so one VM per thread serves every check over the same supplied state.
    """

    name = "litesvm"

    def __init__(self, accounts: Mapping[Pubkey, Account] | None = None, *, slot: int = 1_000, fork_from: RpcClient | None = None):
        self.base = dict(accounts or {})
        self.slot = slot
        self.fork_from = fork_from
        self._local = threading.local()

    def _new_vm(self, extra: Mapping[Pubkey, Account] | None = None) -> LiteSVM:
        vm = LiteSVM().with_sigverify(False).with_blockhash_check(False).with_transaction_history(0)
        vm.warp_to_slot(self.slot)
        for key, account in {**self.base, **(extra or {})}.items():
            vm.set_account(key, account)
        return vm

    def vm(self) -> LiteSVM:
        vm = getattr(self._local, "vm", None)
        if vm is None:
            vm = self._local.vm = self._new_vm()
        return vm

    def set_account(self, key: Pubkey, account: Account) -> None:
        """Add or replace supplied state (tests and operators); every thread's VM is rebuilt."""
        self.base[key] = account
        self._local = threading.local()

    def accounts(self, keys):
        if self.fork_from is not None:
            wanted = [k for k in keys if k not in self.base]
            fetched, slot = self.fork_from.multiple_accounts(wanted) if wanted else ({}, self.slot)
            found = {k: self.base.get(k, fetched.get(k)) for k in keys}
            return found, slot
        vm = self.vm()
        return {k: vm.get_account(k) for k in keys}, self.slot

    def _forked_vm(self, resolved: ResolvedKeys, decoded: Decoded) -> LiteSVM:
        keys = [k for k in (*resolved.keys, *(lk.table for lk in decoded.lookups)) if k not in self.base]
        fetched, _slot = self.fork_from.multiple_accounts(keys) if keys else ({}, 0)
        programdata = []
        for account in fetched.values():
            if account is not None and account.executable and str(account.owner) == constants.UPGRADEABLE_LOADER:
                data = bytes(account.data)
                if len(data) >= 36:
                    programdata.append(Pubkey.from_bytes(data[4:36]))
        if programdata:
            more, _slot = self.fork_from.multiple_accounts(programdata)
            fetched.update(more)
        builtin = self.vm()  # programs LiteSVM ships (System, Token, ...) stay its own builds
        extra = {k: a for k, a in fetched.items() if a is not None and not (a.executable and builtin.get_account(k) is not None)}
        return self._new_vm(extra)

    def simulate(self, decoded, resolved, watch):
        vm = self._forked_vm(resolved, decoded) if self.fork_from is not None else self.vm()
        sim = Simulation(slot=self.slot)
        sim.pre = {k: vm.get_account(k) for k in watch}
        try:
            result = vm.simulate_transaction(decoded.transaction)
        except BaseException as exc:  # noqa: BLE001 - a pyo3 panic inside the VM must not become a 500
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            self._local = threading.local()  # do not reuse a VM that panicked
            sim.err = json.dumps(f"the simulator could not run this transaction: {str(exc)[:200]}")
            return sim
        meta = result.meta()
        sim.logs = list(meta.logs())
        sim.units_consumed = meta.compute_units_consumed()
        sim.fee = meta.fee()
        if isinstance(result, FailedTransactionMetadata):
            sim.err = json.dumps(transaction_error_json(result.err()), separators=(",", ":"))
            return sim
        post = dict(result.post_accounts())
        # LiteSVM returns the writable accounts; one it does not return was not written.
        sim.post = {k: post.get(k, sim.pre[k]) for k in watch}
        for group in meta.inner_instructions():
            for inner in group:
                sim.inner_programs.append(resolved.keys[inner.instruction().program_id_index])
        return sim


def accounts_from_file(path: Path) -> dict[Pubkey, Account]:
    """Operator-supplied state: a JSON object of address to the node's account shape (encoding base64)."""
    raw = json.loads(Path(path).read_text())
    if not isinstance(raw, dict):
        raise ValueError(f"{path} must hold a JSON object of address to account.")
    return {Pubkey.from_string(address): account_from_json(value) for address, value in raw.items() if value is not None}


_configured: dict[tuple, Simulator] = {}
_configured_lock = threading.Lock()


def rpc_client() -> RpcClient | None:
    if not settings.PREFLIGHT_RPC_URL:
        return None
    return RpcClient(settings.PREFLIGHT_RPC_URL, timeout=settings.PREFLIGHT_RPC_TIMEOUT_SECONDS,
                     commitment=settings.PREFLIGHT_RPC_COMMITMENT)


def configured() -> Simulator:
    """The simulator the settings name: "rpc" (needs PREFLIGHT_RPC_URL) or "litesvm" (the default)."""
    kind = settings.PREFLIGHT_SIMULATOR
    state_file = settings.PREFLIGHT_LITESVM_ACCOUNTS_FILE
    mtime = Path(state_file).stat().st_mtime_ns if state_file and Path(state_file).exists() else None
    cache_key = (kind, settings.PREFLIGHT_RPC_URL, settings.PREFLIGHT_LITESVM_FORK, state_file, mtime)
    with _configured_lock:
        simulator = _configured.get(cache_key)
        if simulator is not None:
            return simulator
        client = rpc_client()
        if kind == "rpc":
            if client is None:
                raise ServiceUnavailable("Preflight is set to simulate on a node, but PREFLIGHT_RPC_URL is not set.")
            simulator = RpcSimulator(client)
        else:
            base = accounts_from_file(Path(state_file)) if mtime is not None else {}
            simulator = LiteSvmSimulator(base, fork_from=client if settings.PREFLIGHT_LITESVM_FORK else None)
        _configured.clear()
        _configured[cache_key] = simulator
        return simulator


def node_unavailable(exc: NodeUnavailable) -> BadGateway:
    return BadGateway(str(exc)[:1].upper() + str(exc)[1:])
