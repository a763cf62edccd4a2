"""The five /api/x402/ routes, paid with the official x402 client against the running server and answered by
the products' own services."""

import json

import pytest
import requests

from beacon.sample_site import LocalSite, sample_routes
from billing.models import X402Payment
from tests.billing.test_x402 import facilitator, payer_client  # noqa: F401 - fixtures
from tests.preflight.chain import World, sol_transfer

pytestmark = pytest.mark.django_db(transaction=True)


def session(cap: str | None = None):
    from x402.http.clients import x402_requests

    return x402_requests(payer_client(cap))


def settled(response) -> dict:
    from x402.http.utils import decode_payment_response_header

    return decode_payment_response_header(response.headers["PAYMENT-RESPONSE"]).model_dump(by_alias=True)


def test_evaluate_is_paid_and_answers_an_evaluation(live_server, facilitator):  # noqa: F811
    url = f"{live_server.url}/api/x402/evaluate"
    unpaid = requests.post(url, json={"input": "Call me at +1 415 555 0100"})
    assert unpaid.status_code == 402 and unpaid.json()["accepts"][0]["amount"] == "2000"
    response = session().post(url, json={"input": "Call me at +1 415 555 0100"})
    assert response.status_code == 200, response.text
    assert response.json()["recommended_action"] in ("block", "redact", "review", "allow")
    assert settled(response)["success"] is True
    assert X402Payment.objects.get(route="POST /api/x402/evaluate").status == X402Payment.SETTLED


def test_evaluate_with_bad_input_or_an_unknown_rule_set_asks_for_no_payment(live_server, facilitator):  # noqa: F811
    url = f"{live_server.url}/api/x402/evaluate"
    assert requests.post(url, json={"input": "x" * 2001}).status_code == 400
    unknown = requests.post(url, json={"input": "hello", "rule_set": "no-such-set"})
    assert unknown.status_code == 404 and "PAYMENT-REQUIRED" not in unknown.headers
    assert facilitator.calls == [] and not X402Payment.objects.exists()


def test_atlas_lookup_is_paid_per_call_outside_the_keyless_limit(live_server, facilitator):  # noqa: F811
    url = f"{live_server.url}/api/x402/atlas/lookup"
    paying = session()
    for _ in range(11):  # past the 10 keyless lookups a day: x402 calls are not counted against them
        response = paying.get(url, params={"user_agent": "Mozilla/5.0 (compatible; GPTBot/1.1; +https://openai.com/gptbot)"})
        assert response.status_code == 200, response.text
    assert response.json()["user_agent"].startswith("Mozilla/5.0")
    assert "X-Atlas-Lookup-Remaining" not in response.headers
    assert X402Payment.objects.filter(status=X402Payment.SETTLED, amount="1000").count() == 11
    assert requests.get(url).status_code == 400


def test_the_atlas_report_costs_nine_dollars_and_needs_the_cap_raised(live_server, facilitator):  # noqa: F811
    url = f"{live_server.url}/api/x402/atlas/report"
    with pytest.raises(Exception, match="max_amount_per_payment"):
        session().get(url)
    response = session(cap="$10").get(url)
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/markdown") and response.text.startswith("# Atlas report")
    assert "## Verification methods" in response.text
    assert X402Payment.objects.get().amount == "9000000"


def test_beacon_is_paid_and_the_report_is_the_response(live_server, facilitator, fake_dns, settings):  # noqa: F811
    settings.BEACON_MCP_REGISTRY_URL = ""
    site = LocalSite()
    fake_dns({"shop.test": ["127.0.0.1"]})
    origin = f"http://shop.test:{site.port}"
    site.routes.update(sample_routes(origin, registry=False))
    try:
        url = f"{live_server.url}/api/x402/beacon"
        assert requests.get(url, params={"url": "ftp://shop.test/"}).status_code == 400
        response = session(cap="$2").get(url, params={"url": origin + "/"})
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["status"] == "done" and body["paid_by"] == "x402" and body["report"]["checks"]
        assert X402Payment.objects.get().amount == "1000000"
    finally:
        site.stop()


def test_beacon_refuses_a_site_that_does_not_answer_before_payment(live_server, facilitator, fake_dns):  # noqa: F811
    fake_dns({"dead.test": ["127.0.0.1"]})
    response = requests.get(f"{live_server.url}/api/x402/beacon", params={"url": "http://dead.test:1/"})
    assert response.status_code in (400, 422)
    assert facilitator.calls == []


def test_preflight_is_paid_and_answers_a_signed_verdict(live_server, facilitator, settings, tmp_path):  # noqa: F811
    from preflight.simulators import account_to_json

    world = World()
    state = tmp_path / "accounts.json"
    state.write_text(json.dumps({str(k): account_to_json(a) for k, a in world.simulator.base.items()}))
    settings.PREFLIGHT_SIMULATOR = "litesvm"
    settings.PREFLIGHT_LITESVM_ACCOUNTS_FILE = str(state)
    url = f"{live_server.url}/api/x402/preflight"
    body = {"transaction": world.legacy([sol_transfer(world.wallet, world.other, 1_000)]), "policy": world.policy()}
    assert requests.post(url, json={"transaction": "not base64!", "policy": world.policy()}).status_code == 400
    response = session().post(url, json=body)
    assert response.status_code == 200, response.text
    assert response.json()["decision"] == "allow" and response.json()["receipt"]["signature"]
    assert X402Payment.objects.get().amount == "10000"


def test_a_preflight_check_that_fails_after_payment_is_verified_is_not_settled(live_server, facilitator, settings):  # noqa: F811
    import socket

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there: the node cannot be reached
    settings.PREFLIGHT_SIMULATOR = "rpc"
    settings.PREFLIGHT_RPC_URL = f"http://127.0.0.1:{port}"
    world = World()
    body = {"transaction": world.legacy([sol_transfer(world.wallet, world.other, 1_000)]), "policy": world.policy()}
    response = session().post(f"{live_server.url}/api/x402/preflight", json=body)
    assert response.status_code in (502, 503), response.text
    assert "PAYMENT-RESPONSE" not in response.headers
    assert facilitator.operations() == ["verify"]
    payment = X402Payment.objects.get()
    assert payment.status == X402Payment.RELEASED and payment.transaction == ""
