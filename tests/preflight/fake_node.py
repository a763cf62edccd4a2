"""A Solana JSON-RPC node on loopback, backed by a test world's LiteSVM, in the node's wire format.

It answers getMultipleAccounts, simulateTransaction and getTransaction shaped as Agave returns them
(base64 account data, `context.slot`, `err` in the TransactionError JSON shape, inner instructions
with `programId`, base58 `data` and `stackHeight`; with `agave3=True` also `fee`,
`preBalances`/`postBalances`, `pre/postTokenBalances` and `loadedAddresses`, which Agave 3.0 added).
Modes make it misbehave: `omit_accounts` (simulation answered without the accounts), `error` (a
JSON-RPC error to simulateTransaction), `http_error` (HTTP 503 without JSON).
"""

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from solders.address_lookup_table_account import AddressLookupTable
from solders.message import MessageV0
from solders.transaction import VersionedTransaction
from solders.transaction_metadata import FailedTransactionMetadata

from preflight.simulators import account_to_json, transaction_error_json
from preflight.state import token_state

_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def b58encode(raw: bytes) -> str:
    number = int.from_bytes(raw, "big")
    out = ""
    while number:
        number, rest = divmod(number, 58)
        out = _B58[rest] + out
    return "1" * (len(raw) - len(raw.lstrip(b"\0"))) + out


class FakeNode:
    def __init__(self, world, *, agave3: bool = True, mode: str = "ok", slot: int = 5_000):
        self.world = world
        self.agave3 = agave3
        self.mode = mode
        self.slot = slot
        self.requests: list[tuple[str, list]] = []
        self.landed: dict[str, dict] = {}
        node = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                node.requests.append((body["method"], body["params"]))
                if node.mode == "http_error":
                    self.send_response(503)
                    self.end_headers()
                    self.wfile.write(b"upstream unavailable")
                    return
                try:
                    answer = {"jsonrpc": "2.0", "id": body["id"], "result": node.answer(body["method"], body["params"])}
                except RpcError as exc:
                    answer = {"jsonrpc": "2.0", "id": body["id"], "error": {"code": exc.code, "message": exc.message}}
                raw = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def methods(self) -> list[str]:
        return [method for method, _ in self.requests]

    # The node's answers.

    def context(self) -> dict:
        return {"apiVersion": "3.1.8" if self.agave3 else "2.3.3", "slot": self.slot}

    def answer(self, method: str, params: list):
        if method == "getMultipleAccounts":
            keys, config = params
            if len(keys) > 100:
                raise RpcError(-32602, "Too many accounts provided; max 100")
            assert config["encoding"] == "base64"
            vm = self.world.vm()
            from solders.pubkey import Pubkey

            accounts = [vm.get_account(Pubkey.from_string(k)) for k in keys]
            return {"context": self.context(), "value": [account_to_json(a) if a is not None and a.lamports else None for a in accounts]}
        if method == "simulateTransaction":
            return self.simulate(*params)
        if method == "getFeeForMessage":
            from solders.message import from_bytes_versioned
            from solders.signature import Signature

            message = from_bytes_versioned(base64.b64decode(params[0]))
            tx = VersionedTransaction.populate(message, [Signature.default()] * message.header.num_required_signatures)
            return {"context": self.context(), "value": self.world.vm().simulate_transaction(tx).meta().fee()}
        if method == "getTransaction":
            return self.landed.get(params[0])
        raise RpcError(-32601, "Method not found")

    def _keys(self, message):
        keys = list(message.account_keys)
        if isinstance(message, MessageV0):
            vm = self.world.vm()
            writable, readonly = [], []
            for lookup in message.address_table_lookups:
                table = AddressLookupTable.deserialize(bytes(vm.get_account(lookup.account_key).data)).addresses
                writable += [table[i] for i in lookup.writable_indexes]
                readonly += [table[i] for i in lookup.readonly_indexes]
            return keys + writable + readonly, {"writable": [str(k) for k in writable], "readonly": [str(k) for k in readonly]}
        return keys, {"writable": [], "readonly": []}

    def simulate(self, tx_b64: str, config: dict) -> dict:
        if config.get("sigVerify") and config.get("replaceRecentBlockhash"):
            raise RpcError(-32602, "sigVerify may not be used with replaceRecentBlockhash")
        if config.get("minContextSlot", 0) > self.slot:
            raise RpcError(-32016, "Minimum context slot has not been reached")
        if self.mode == "error":
            raise RpcError(-32002, "Transaction simulation failed: Blockhash not found")
        tx = VersionedTransaction.from_bytes(base64.b64decode(tx_b64))
        return {"context": self.context(), "value": self._run(tx, config)}

    def _run(self, tx, config: dict | None = None) -> dict:
        from solders.pubkey import Pubkey

        vm = self.world.vm()
        keys, loaded = self._keys(tx.message)
        pre = [vm.get_account(k) for k in keys]
        result = vm.simulate_transaction(tx)
        meta = result.meta()
        failed = isinstance(result, FailedTransactionMetadata)
        post_map = {} if failed else dict(result.post_accounts())
        post = [post_map.get(k, a) for k, a in zip(keys, pre, strict=True)]
        value = {
            "err": transaction_error_json(result.err()) if failed else None,
            "logs": list(meta.logs()),
            "accounts": None,
            "unitsConsumed": meta.compute_units_consumed(),
            "loadedAccountsDataSize": 0,
            "returnData": None,
            "innerInstructions": [
                {"index": index, "instructions": [
                    {"programId": str(keys[inner.instruction().program_id_index]),
                     "accounts": [str(keys[i]) for i in inner.instruction().accounts],
                     "data": b58encode(bytes(inner.instruction().data)), "stackHeight": inner.stack_height()}
                    for inner in group]}
                for index, group in enumerate(meta.inner_instructions()) if group
            ],
            "replacementBlockhash": {"blockhash": str(vm.latest_blockhash()), "lastValidBlockHeight": self.slot + 150},
        }
        if config is not None and "accounts" in config and not failed and self.mode != "omit_accounts":
            by_key = dict(zip(keys, post, strict=True))
            wanted = [Pubkey.from_string(k) for k in config["accounts"]["addresses"]]
            value["accounts"] = [account_to_json(by_key[k]) if by_key.get(k) is not None and by_key[k].lamports else None for k in wanted]
        if self.agave3:
            value.update(
                fee=meta.fee(),
                preBalances=[a.lamports if a else 0 for a in pre],
                postBalances=[a.lamports if a else 0 for a in (pre if failed else post)],
                preTokenBalances=token_balances(pre),
                postTokenBalances=token_balances(pre if failed else post),
                loadedAddresses=loaded,
            )
        return value

    def land(self, tx: VersionedTransaction, *, block_time: float | None = None, run_as: VersionedTransaction | None = None) -> str:
        """Record `tx` as landed (what getTransaction will answer), with the effects of running `run_as` (default `tx`)."""
        value = self._run(run_as or tx, None)
        keys, loaded = self._keys(tx.message)
        signature = str(tx.signatures[0])
        self.landed[signature] = {
            "slot": self.slot + 10,
            "blockTime": int(block_time if block_time is not None else time.time()),
            "transaction": [base64.b64encode(bytes(tx)).decode(), "base64"],
            "version": 0 if isinstance(tx.message, MessageV0) else "legacy",
            "meta": {
                "err": value["err"],
                "status": {"Ok": None} if value["err"] is None else {"Err": value["err"]},
                "fee": self.world.vm().simulate_transaction(run_as or tx).meta().fee(),
                "preBalances": value.get("preBalances"),
                "postBalances": value.get("postBalances"),
                "preTokenBalances": value.get("preTokenBalances"),
                "postTokenBalances": value.get("postTokenBalances"),
                "innerInstructions": [
                    {"index": g["index"], "instructions": [{"programIdIndex": [str(k) for k in keys].index(i["programId"]), "accounts": [], "data": i["data"], "stackHeight": i["stackHeight"]} for i in g["instructions"]]}
                    for g in value["innerInstructions"]
                ],
                "loadedAddresses": loaded,
                "logMessages": value["logs"],
                "rewards": [],
                "computeUnitsConsumed": value["unitsConsumed"],
            },
        }
        return signature


def token_balances(accounts) -> list[dict]:
    rows = []
    for index, account in enumerate(accounts):
        state = token_state(account) if account is not None and account.lamports else None
        if state is None:
            continue
        rows.append({
            "accountIndex": index, "mint": str(state.mint), "owner": str(state.owner), "programId": str(state.program),
            "uiTokenAmount": {"amount": str(state.amount), "decimals": 6, "uiAmount": state.amount / 1e6, "uiAmountString": str(state.amount / 1e6)},
        })
    return rows


class RpcError(Exception):
    def __init__(self, code: int, message: str):
        self.code = code
        self.message = message
