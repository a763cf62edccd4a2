"""What x402 adds to one request, measured in-process (no sockets): the 402 answer, and a paid call
(decode, verify with real EIP-712 recovery, claim the authorization, run, settle, record) against the
same handler called without payment.

    python bench/billing_x402.py [-n 200]

Runs on a scratch SQLite database (or DATABASE_URL's, in a scratch schema it migrates) with the
official SDK's facilitator in-process (tests/billing/x402_facilitator.py's simulated chain). The
client's signing is timed apart: it happens on the payer's side.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("VAR_DIR", tempfile.mkdtemp(prefix="bench_x402_"))
os.environ.pop("DATABASE_URL", None)
os.environ["X402_PAY_TO"] = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"


def ms(samples: list[float]) -> str:
    samples = sorted(samples)
    return f"p50 {statistics.median(samples) * 1000:7.2f} ms   p95 {samples[int(len(samples) * 0.95) - 1] * 1000:7.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=200)
    n = parser.parse_args().n

    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import override_settings, setup_test_environment

    setup_test_environment()
    call_command("migrate", verbosity=0)

    from eth_account import Account
    from x402 import x402ClientSync
    from x402.http.utils import decode_payment_required_header, encode_payment_signature_header
    from x402.mechanisms.evm.exact import ExactEvmClientScheme
    from x402.mechanisms.evm.signers import EthAccountSigner

    from billing import x402 as mechanism
    from tests.billing.x402_facilitator import NETWORK, LoopbackFacilitator

    facilitator = LoopbackFacilitator().facilitator  # the SDK facilitator itself, called in-process

    class InProcess:
        def verify(self, payload, requirements):
            return facilitator.verify(payload, requirements)

        def settle(self, payload, requirements):
            return facilitator.settle(payload, requirements)

        def get_supported(self):
            return facilitator.get_supported()

    mechanism.facilitator_for = lambda config: InProcess()
    payer = x402ClientSync()
    payer.register(NETWORK, ExactEvmClientScheme(EthAccountSigner(Account.create())))
    client = Client()
    body = {"input": "hello"}

    with override_settings(ROOT_URLCONF="tests.billing.x402_urls", X402_ENABLED=True):
        unpaid, paid, signing, bad = [], [], [], []
        for i in range(n + 20):
            started = time.perf_counter()
            response = client.post("/x402-test/echo", body, content_type="application/json")
            took = time.perf_counter() - started
            assert response.status_code == 402
            required = decode_payment_required_header(response.headers["PAYMENT-REQUIRED"])
            started = time.perf_counter()
            header = encode_payment_signature_header(payer.create_payment_payload(required))
            signed = time.perf_counter() - started
            started = time.perf_counter()
            answer = client.post("/x402-test/echo", body, content_type="application/json", HTTP_PAYMENT_SIGNATURE=header)
            paid_took = time.perf_counter() - started
            assert answer.status_code == 200, answer.content
            started = time.perf_counter()
            refused = client.post("/x402-test/echo", {}, content_type="application/json")
            bad_took = time.perf_counter() - started
            assert refused.status_code == 400
            if i >= 20:
                unpaid.append(took)
                signing.append(signed)
                paid.append(paid_took)
                bad.append(bad_took)
    print(f"x402, {n} calls each, in-process (Django test client, SQLite, SDK facilitator in-process):")
    print(f"  400 before payment (validation only)      {ms(bad)}")
    print(f"  402 with PAYMENT-REQUIRED                 {ms(unpaid)}")
    print(f"  paid: verify, claim, run, settle, record  {ms(paid)}")
    print(f"  payer's signing (client side)             {ms(signing)}")


if __name__ == "__main__":
    main()
