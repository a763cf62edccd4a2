"""x402 v2 end to end: the official SDK's client (its automatic 402 handling) against the running server,
and a facilitator on loopback that verifies the EIP-712 signature for real."""

import base64
import json
import time
import types

import pytest
import requests
from eth_account import Account
from x402 import x402ClientSync
from x402.http.clients import x402_requests
from x402.http.utils import decode_payment_required_header, decode_payment_response_header, encode_payment_signature_header
from x402.mechanisms.evm.exact import ExactEvmClientScheme
from x402.mechanisms.evm.signers import EthAccountSigner

from billing import x402 as mechanism
from billing.models import X402Payment
from core import safe_http
from tests.billing.x402_facilitator import NETWORK, USDC_BASE, LoopbackFacilitator

pytestmark = [pytest.mark.urls("tests.billing.x402_urls"), pytest.mark.django_db(transaction=True)]

PAY_TO = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"


def configure(settings, facilitator: LoopbackFacilitator, **extra):
    settings.X402_PAY_TO = PAY_TO
    settings.X402_ENABLED = True
    settings.X402_NETWORK = NETWORK
    settings.X402_FACILITATOR_URL = facilitator.url
    for name, value in extra.items():
        setattr(settings, name, value)
    mechanism._resource_server.cache_clear()
    mechanism._http_server.cache_clear()


@pytest.fixture
def facilitator(settings):
    running = LoopbackFacilitator().start()
    configure(settings, running)
    with safe_http.allow_loopback():
        yield running
    running.stop()
    mechanism._resource_server.cache_clear()
    mechanism._http_server.cache_clear()


def payer_client(cap: str | None = None) -> x402ClientSync:
    client = x402ClientSync()
    client.register(NETWORK, ExactEvmClientScheme(EthAccountSigner(Account.create())))
    if cap:
        client.set_spend_controls({"max_amount_per_payment": cap})
    return client


def payment_for(client: x402ClientSync, response: requests.Response, **change) -> str:
    required = decode_payment_required_header(response.headers["PAYMENT-REQUIRED"])
    for name, value in change.items():
        setattr(required.accepts[0], name, value)
    return encode_payment_signature_header(client.create_payment_payload(required))


def test_an_unpaid_call_is_a_402_with_the_requirements_in_header_and_body(live_server, facilitator):
    response = requests.post(f"{live_server.url}/x402-test/echo", json={"input": "hello"})
    assert response.status_code == 402
    required = json.loads(base64.b64decode(response.headers["PAYMENT-REQUIRED"]))
    body = response.json()
    assert body["error"].startswith("Payment required")
    assert body["x402Version"] == required["x402Version"] == 2
    assert body["accepts"] == required["accepts"]
    (accept,) = required["accepts"]
    assert accept["scheme"] == "exact" and accept["network"] == "eip155:8453"
    assert accept["asset"] == USDC_BASE and accept["amount"] == "2000" and accept["payTo"] == PAY_TO
    assert accept["extra"] == {"name": "USD Coin", "version": "2"}
    assert required["resource"]["url"].endswith("/x402-test/echo")
    assert "PAYMENT-REQUIRED" in response.headers["Access-Control-Expose-Headers"]
    assert facilitator.calls == []


def test_bad_input_is_a_400_before_anyone_is_asked_to_pay(live_server, facilitator):
    response = requests.post(f"{live_server.url}/x402-test/echo", json={"nothing": 1})
    assert response.status_code == 400
    assert response.json() == {"error": "input: This field is required."}
    assert "PAYMENT-REQUIRED" not in response.headers
    lookup = requests.get(f"{live_server.url}/x402-test/lookup")
    assert lookup.status_code == 400 and facilitator.calls == []


def test_the_official_client_pays_and_the_answer_carries_the_settlement(live_server, facilitator):
    session = x402_requests(payer_client())
    response = session.post(f"{live_server.url}/x402-test/echo", json={"input": "hello"})
    assert response.status_code == 200
    assert response.json() == {"echo": "hello"}
    settled = decode_payment_response_header(response.headers["PAYMENT-RESPONSE"])
    assert settled.success and settled.network == NETWORK and settled.transaction.startswith("0x")
    assert facilitator.operations() == ["verify", "settle"]
    payment = X402Payment.objects.get()
    assert payment.status == X402Payment.SETTLED
    assert payment.route == "POST /x402-test/echo" and payment.amount == "2000"
    assert payment.transaction == settled.transaction and payment.payer == settled.payer.lower()
    assert payment.nonce.startswith("0x") and len(payment.nonce) == 66
    assert payment.network == NETWORK and payment.response_status == 200 and payment.settled_at is not None


def test_a_get_route_is_paid_with_its_query(live_server, facilitator):
    session = x402_requests(payer_client())
    response = session.get(f"{live_server.url}/x402-test/lookup", params={"user_agent": "GPTBot/1.0"})
    assert response.status_code == 200 and response.json() == {"user_agent": "GPTBot/1.0"}
    assert X402Payment.objects.get().amount == "1000"


def test_the_nine_dollar_report_needs_the_clients_spending_cap_raised(live_server, facilitator):
    with pytest.raises(Exception, match="max_amount_per_payment"):
        x402_requests(payer_client()).get(f"{live_server.url}/x402-test/report")
    assert not X402Payment.objects.exists()
    response = x402_requests(payer_client(cap="$10")).get(f"{live_server.url}/x402-test/report")
    assert response.status_code == 200 and response.json() == {"report": "# Report"}
    assert X402Payment.objects.get().amount == "9000000"


def test_a_tampered_amount_is_refused(live_server, facilitator):
    client = payer_client()
    url = f"{live_server.url}/x402-test/echo"
    unpaid = requests.post(url, json={"input": "x"})
    payload = json.loads(base64.b64decode(payment_for(client, unpaid)))
    payload["payload"]["authorization"]["value"] = "1"
    tampered = base64.b64encode(json.dumps(payload).encode()).decode()
    response = requests.post(url, json={"input": "x"}, headers={"PAYMENT-SIGNATURE": tampered})
    assert response.status_code == 402
    assert response.json()["error"] == "The payment authorization is not for this route's price."
    assert "settle" not in facilitator.operations() and not X402Payment.objects.exists()


def test_a_signature_over_a_lower_price_is_refused(live_server, facilitator):
    client = payer_client()
    url = f"{live_server.url}/x402-test/echo"
    cheap = payment_for(client, requests.post(url, json={"input": "x"}), amount="1")
    response = requests.post(url, json={"input": "x"}, headers={"PAYMENT-SIGNATURE": cheap})
    assert response.status_code == 402
    assert "PAYMENT-REQUIRED" in response.headers and not X402Payment.objects.exists()


def test_a_payment_on_another_network_is_refused(live_server, facilitator):
    client = x402ClientSync()
    signer = EthAccountSigner(Account.create())
    client.register("eip155:84532", ExactEvmClientScheme(signer))
    url = f"{live_server.url}/x402-test/echo"
    sepolia = payment_for(client, requests.post(url, json={"input": "x"}), network="eip155:84532",
                          asset="0x036CbD53842c5426634e7929541eC2318f3dCF7e")
    response = requests.post(url, json={"input": "x"}, headers={"PAYMENT-SIGNATURE": sepolia})
    assert response.status_code == 402
    assert "does not match this route's requirements" in response.json()["error"]
    assert facilitator.calls == [] and not X402Payment.objects.exists()


def test_an_expired_authorization_is_refused(live_server, facilitator, monkeypatch):
    from x402.mechanisms.evm.exact import client as exact_client

    url = f"{live_server.url}/x402-test/echo"
    unpaid = requests.post(url, json={"input": "x"})
    monkeypatch.setattr(exact_client, "time", types.SimpleNamespace(time=lambda: time.time() - 3600))
    expired = payment_for(payer_client(), unpaid)
    monkeypatch.undo()
    response = requests.post(url, json={"input": "x"}, headers={"PAYMENT-SIGNATURE": expired})
    assert response.status_code == 402
    assert response.json()["error"] == "The payment authorization has expired; sign a new one."
    assert facilitator.operations() == ["verify"] and not X402Payment.objects.exists()


def test_a_replayed_authorization_is_refused(live_server, facilitator):
    client = payer_client()
    url = f"{live_server.url}/x402-test/echo"
    signature = payment_for(client, requests.post(url, json={"input": "x"}))
    first = requests.post(url, json={"input": "x"}, headers={"PAYMENT-SIGNATURE": signature})
    assert first.status_code == 200
    again = requests.post(url, json={"input": "x"}, headers={"PAYMENT-SIGNATURE": signature})
    assert again.status_code == 402
    assert again.json()["error"] == "This payment authorization was already used; sign a new one."
    assert "PAYMENT-REQUIRED" in again.headers and "PAYMENT-RESPONSE" not in again.headers
    assert facilitator.operations() == ["verify", "settle"]  # refused here, before the facilitator is asked
    assert X402Payment.objects.get().status == X402Payment.SETTLED


def test_a_request_that_fails_is_not_settled_and_its_authorization_may_pay_a_retry(live_server, facilitator):
    client = payer_client()
    url = f"{live_server.url}/x402-test/echo"
    signature = payment_for(client, requests.post(url, json={"input": "x"}))
    failed = requests.post(url, json={"input": "x", "missing": True}, headers={"PAYMENT-SIGNATURE": signature})
    assert failed.status_code == 404 and failed.json() == {"error": "No such thing."}
    assert "PAYMENT-RESPONSE" not in failed.headers
    assert facilitator.operations() == ["verify"]
    payment = X402Payment.objects.get()
    assert payment.status == X402Payment.RELEASED and payment.response_status == 404 and payment.transaction == ""
    retried = requests.post(url, json={"input": "x"}, headers={"PAYMENT-SIGNATURE": signature})
    assert retried.status_code == 200
    assert facilitator.operations() == ["verify", "verify", "settle"]
    assert X402Payment.objects.get().status == X402Payment.SETTLED


def test_a_settlement_that_fails_keeps_the_paid_body(live_server, facilitator):
    facilitator.settle_fails = True
    response = x402_requests(payer_client()).post(f"{live_server.url}/x402-test/echo", json={"input": "secret answer"})
    assert response.status_code == 402
    assert "secret answer" not in response.text
    assert "could not be settled (insufficient_funds)" in response.json()["error"]
    payment = X402Payment.objects.get()
    assert payment.status == X402Payment.FAILED and payment.error == "insufficient_funds"


def test_the_facilitator_credentials_are_sent(live_server, settings):
    running = LoopbackFacilitator(token="fac-secret").start()
    configure(settings, running, X402_FACILITATOR_TOKEN="fac-secret")
    try:
        with safe_http.allow_loopback():
            response = x402_requests(payer_client()).post(f"{live_server.url}/x402-test/echo", json={"input": "x"})
        assert response.status_code == 200
        assert running.auth_seen == ["Bearer fac-secret", "Bearer fac-secret"]
    finally:
        running.stop()


def test_the_facilitator_is_reached_only_through_safe_http(live_server, facilitator):
    # Without the test allowance, safe_http refuses the loopback facilitator: no payment is verified.
    client = payer_client()
    url = f"{live_server.url}/x402-test/echo"
    signature = payment_for(client, requests.post(url, json={"input": "x"}))
    safe_http._loopback_allowance, saved = 0, safe_http._loopback_allowance
    try:
        response = requests.post(url, json={"input": "x"}, headers={"PAYMENT-SIGNATURE": signature})
    finally:
        safe_http._loopback_allowance = saved
    assert response.status_code in (402, 502)
    assert facilitator.calls == [] and not X402Payment.objects.exists()


def test_without_a_receiving_address_x402_is_not_enabled(client, settings):
    settings.X402_ENABLED = False
    response = client.post("/x402-test/echo", {"input": "x"}, format="json")
    assert response.status_code == 503
    assert response.json() == {"error": "x402 pay-per-use is not enabled on this service."}
    assert client.post("/x402-test/echo", {}, format="json").status_code == 400


def test_a_payment_header_that_is_not_a_v2_payload_is_a_402_saying_so(live_server, facilitator):
    url = f"{live_server.url}/x402-test/echo"
    for header in ["not base64 at all", "eyJ4NDAyVmVyc2lvbiI6IDF9"]:  # the second is {"x402Version": 1}
        response = requests.post(url, json={"input": "x"}, headers={"PAYMENT-SIGNATURE": header})
        assert response.status_code == 402
        assert response.json()["error"] == "The PAYMENT-SIGNATURE header is not a base64 JSON x402 v2 PaymentPayload."
        assert response.json()["accepts"][0]["network"] == "eip155:8453"
    assert facilitator.calls == [] and not X402Payment.objects.exists()
