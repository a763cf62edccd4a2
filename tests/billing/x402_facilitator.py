"""An x402 facilitator on loopback: the official SDK's x402FacilitatorSync with its ExactEvmFacilitatorScheme,
served over HTTP the way a real facilitator is (POST /verify, POST /settle, GET /supported).

EIP-712 signatures are recovered for real (eth-account); only the chain is simulated: the payer is an
EOA, the USDC contract exists, balances are ample, and a settled nonce cannot be settled again (as
EIP-3009 makes it on chain).
"""

import json
import secrets
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from eth_account import Account
from eth_account.messages import encode_typed_data
from x402 import x402FacilitatorSync
from x402.mechanisms.evm.exact import ExactEvmFacilitatorScheme
from x402.mechanisms.evm.types import TransactionReceipt
from x402.schemas import PaymentPayload, PaymentRequirements

NETWORK = "eip155:8453"
CHAIN_ID = 8453
USDC_BASE = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"


class SimulatedChain:
    """FacilitatorEvmSigner: real ecrecover, simulated reads and writes."""

    def __init__(self):
        self.account = Account.create()
        self.used_nonces: set[str] = set()
        self.transfers: list[tuple] = []

    def get_addresses(self):
        return [self.account.address]

    def get_chain_id(self):
        return CHAIN_ID

    def get_code(self, address):
        return b"\x60\x80" if address.lower() == USDC_BASE.lower() else b""

    def get_balance(self, address, token_address):
        return 10**12

    def read_contract(self, address, abi, function_name, *args):
        if function_name == "authorizationState":
            return any(str(a).lower() in self.used_nonces for a in args if isinstance(a, (str, bytes)))
        if function_name == "transferWithAuthorization":
            nonce = _nonce_of(args)
            if nonce in self.used_nonces:
                raise RuntimeError("FiatTokenV2: authorization is used or canceled")
            return None
        return 0

    def verify_typed_data(self, address, domain, types, primary_type, message, signature):
        d = domain if isinstance(domain, dict) else {
            "name": domain.name, "version": domain.version, "chainId": domain.chain_id,
            "verifyingContract": domain.verifying_contract}
        t = {k: [{"name": f.name, "type": f.type} if not isinstance(f, dict) else f for f in v]
             for k, v in types.items() if k != "EIP712Domain"}
        recovered = Account.recover_message(encode_typed_data(d, t, message), signature=signature)
        return recovered.lower() == address.lower()

    def write_contract(self, address, abi, function_name, *args, **kwargs):
        nonce = _nonce_of(args)
        if nonce in self.used_nonces:
            raise RuntimeError("FiatTokenV2: authorization is used or canceled")
        self.used_nonces.add(nonce)
        tx = "0x" + secrets.token_hex(32)
        self.transfers.append((function_name, nonce, tx))
        return tx

    def send_transaction(self, to, data):
        return "0x" + secrets.token_hex(32)

    def wait_for_transaction_receipt(self, tx_hash):
        return TransactionReceipt(status=1, block_number=1, tx_hash=tx_hash, logs=None)


def _nonce_of(args) -> str:
    for arg in args:
        if isinstance(arg, bytes) and len(arg) == 32:
            return "0x" + arg.hex()
        if isinstance(arg, str) and arg.startswith("0x") and len(arg) == 66:
            return arg.lower()
    return ""


class LoopbackFacilitator:
    """Start with .start(); .url to configure; .calls lists ("verify"|"settle", body) as received."""

    def __init__(self, *, token: str = "", settle_fails: bool = False):
        self.chain = SimulatedChain()
        self.facilitator = x402FacilitatorSync()
        self.facilitator.register([NETWORK], ExactEvmFacilitatorScheme(self.chain))
        self.token = token
        self.settle_fails = settle_fails
        self.calls: list[tuple[str, dict]] = []
        self.auth_seen: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status, body):
                raw = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self):
                if self.path == "/supported":
                    return self._send(200, owner.facilitator.get_supported().model_dump(by_alias=True, exclude_none=True))
                return self._send(404, {"error": "not found"})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                owner.auth_seen.append(self.headers.get("Authorization", ""))
                if owner.token and self.headers.get("Authorization") != f"Bearer {owner.token}":
                    return self._send(401, {"error": "unauthorized"})
                operation = self.path.strip("/")
                owner.calls.append((operation, body))
                payload = PaymentPayload.model_validate(body["paymentPayload"])
                requirements = PaymentRequirements.model_validate(body["paymentRequirements"])
                if operation == "verify":
                    result = owner.facilitator.verify(payload, requirements)
                elif operation == "settle":
                    if owner.settle_fails:
                        return self._send(200, {"success": False, "errorReason": "insufficient_funds", "transaction": "",
                                                "network": requirements.network})
                    result = owner.facilitator.settle(payload, requirements)
                else:
                    return self._send(404, {"error": "not found"})
                return self._send(200, result.model_dump(by_alias=True, exclude_none=True))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def operations(self) -> list[str]:
        return [operation for operation, _ in self.calls]

    def start(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
