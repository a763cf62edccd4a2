"""The routes: a check through the REST API, its verdict, the public record and its page, the overview."""

import base64
import json
import subprocess

import pytest
from solders.pubkey import Pubkey

from core import signing
from preflight import constants
from preflight.simulators import account_to_json
from tests.preflight.chain import TOKEN, sol_transfer, token_approve, token_transfer

pytestmark = pytest.mark.django_db

CHECKS = "/api/v1/preflight/checks"


@pytest.fixture
def served_world(world, settings, tmp_path):
    """The world's accounts as the operator-supplied LiteSVM state the configured simulator loads."""
    state = tmp_path / "accounts.json"
    state.write_text(json.dumps({str(k): account_to_json(a) for k, a in world.simulator.base.items()}))
    settings.PREFLIGHT_SIMULATOR = "litesvm"
    settings.PREFLIGHT_LITESVM_ACCOUNTS_FILE = str(state)
    return world


def post_check(client, world, tx, **policy):
    return client.post(CHECKS, {"transaction": tx, "policy": world.policy(**policy)}, format="json")


def test_a_check_answers_a_signed_verdict_that_verifies_with_the_published_key(alice, served_world, client):
    world = served_world
    response = post_check(alice.client, world, world.legacy([sol_transfer(world.wallet, world.other, 1_000)]))
    assert response.status_code == 200, response.content
    verdict = response.json()
    assert verdict["decision"] == "allow" and verdict["reasons"] == []
    assert verdict["id"].startswith("pfc_") and len(verdict["digest"]) == 64
    assert verdict["effects"]["sol"]["out_lamports"] == "6000"
    assert verdict["freshness_seconds"] == 120
    assert verdict["record_url"].endswith(f"/api/v1/preflight/checks/{verdict['id']}")
    published = client.get("/api/v1/signing-key").json()
    receipt = verdict["receipt"]
    assert receipt["key_id"] == published["key_id"]
    assert signing.verify(receipt["payload"], receipt["signature"], published["public_key_pem"])
    assert receipt["payload"]["decision"] == "allow" and receipt["payload"]["digest"] == verdict["digest"]
    # The private details are committed to by the signed payload.
    details = {"salt": verdict["details_salt"], "policy": verdict["policy"], "reasons": verdict["reasons"], "effects": verdict["effects"]}
    import hashlib

    assert hashlib.sha256(signing.canonical_json(details)).hexdigest() == receipt["payload"]["details_sha256"]
    tampered = {**receipt["payload"], "decision": "refuse"}
    assert not signing.verify(tampered, receipt["signature"], published["public_key_pem"])


def test_a_published_verdict_verifies_with_openssl_and_the_public_key_alone(alice, served_world, client, tmp_path):
    world = served_world
    verdict_id = post_check(alice.client, world, world.legacy([sol_transfer(world.wallet, world.other, 1)])).json()["id"]
    record = client.get("/api/v1/preflight/record").json()["verdicts"]
    published = next(v for v in record if v["id"] == verdict_id)
    (tmp_path / "key.pem").write_text(client.get("/api/v1/signing-key").json()["public_key_pem"])
    (tmp_path / "payload.json").write_bytes(signing.canonical_json(published["receipt"]["payload"]))
    (tmp_path / "sig.bin").write_bytes(base64.b64decode(published["receipt"]["signature"]))
    result = subprocess.run(
        ["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", "key.pem", "-rawin", "-in", "payload.json", "-sigfile", "sig.bin"],
        cwd=tmp_path, capture_output=True, text=True,
    )
    if result.returncode != 0 and "rawin" in result.stderr:
        pytest.skip("this openssl cannot verify Ed25519 raw input")
    assert result.returncode == 0, result.stderr
    assert "Signature Verified Successfully" in result.stdout


def test_a_refusal_is_a_completed_check_and_is_counted_like_an_allow(alice, served_world):
    world = served_world
    allowed = post_check(alice.client, world, world.legacy([sol_transfer(world.wallet, world.other, 1)]))
    refused = post_check(alice.client, world, world.legacy([token_approve(TOKEN, world.wallet_ata, world.other, world.wallet, 1)]))
    assert refused.status_code == 200 and refused.json()["decision"] == "refuse"
    assert refused.json()["reasons"][0]["code"] == "delegate_approved"
    assert int(allowed["X-RateLimit-Remaining"]) - 1 == int(refused["X-RateLimit-Remaining"])


def test_a_transaction_that_cannot_be_decoded_is_a_400_and_is_not_counted(alice, served_world):
    world = served_world
    first = post_check(alice.client, world, world.legacy([sol_transfer(world.wallet, world.other, 1)]))
    bad = post_check(alice.client, world, base64.b64encode(b"\x01" + b"\x00" * 10).decode())
    assert bad.status_code == 400 and bad.json()["error"].startswith("transaction: is not a Solana transaction")
    after = post_check(alice.client, world, world.legacy([sol_transfer(world.wallet, world.other, 1)]))
    assert int(first["X-RateLimit-Remaining"]) - 1 == int(after["X-RateLimit-Remaining"])


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"transaction": "not base64!!", "policy": "P"}, "transaction: is not valid base64."),
        ({"transaction": "", "policy": "P"}, "transaction: This field may not be blank."),
        ({"transaction": "AAAA", "policy": "P"}, "transaction: is not a Solana transaction"),
        ({"transaction": "T", "policy": {"max_sol_out": 1}}, "policy.wallet: This field is required."),
        ({"transaction": "T", "policy": {"wallet": "nope", "max_sol_out": 1}}, "policy: wallet is not a Solana address"),
        ({"transaction": "T", "policy": {"wallet": "W"}}, "policy.max_sol_out: This field is required"),
        ({"transaction": "T", "policy": {"wallet": "W", "max_sol_out": 1, "max_sol_out_lamports": 5}}, "policy: give max_sol_out or max_sol_out_lamports, not both."),
        ({"transaction": "T", "policy": {"wallet": "W", "max_sol_out": -1}}, "policy.max_sol_out:"),
        ({"transaction": "T", "policy": {"wallet": "W", "max_sol_out": 0.0000000001}}, "policy.max_sol_out:"),
        ({"transaction": "T", "policy": {"wallet": "W", "max_sol_out": 1, "max_token_out": {"W": -1}}}, "policy.max_token_out: the amount for"),
        ({"transaction": "T", "policy": {"wallet": "W", "max_sol_out": 1, "max_token_out": {"x": 1}}}, "policy.max_token_out: mint 'x' is not a Solana address"),
        ({"transaction": "T", "policy": {"wallet": "W", "max_sol_out": 1, "min_token_in": []}}, "policy.min_token_in: must be an object"),
        ({"transaction": "T", "policy": {"wallet": "W", "max_sol_out": 1, "allowed_programs": ["zz"]}}, "policy: allowed_programs entry is not a Solana address"),
        ({"transaction": "T", "policy": {"wallet": "W", "max_sol_out": 1, "max_token_in": {}}}, "policy.max_token_in: is not a policy field."),
        ({"transaction": "T"}, "policy: This field is required."),
    ],
)
def test_invalid_input_is_a_400_naming_the_field(alice, served_world, body, message):
    world = served_world
    tx = world.legacy([sol_transfer(world.wallet, world.other, 1)])
    body = json.loads(json.dumps(body).replace('"T"', json.dumps(tx)).replace('"W"', json.dumps(str(world.wallet))))
    if body.get("policy") == "P":
        body["policy"] = world.policy()
    response = alice.client.post(CHECKS, body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["error"].startswith(message), response.json()


def test_a_check_needs_a_key(client, served_world):
    response = post_check(client, served_world, served_world.legacy([sol_transfer(served_world.wallet, served_world.other, 1)]))
    assert response.status_code == 401


def test_anyone_reads_the_public_verdict_and_only_its_organization_the_details(alice, bob, client, served_world):
    world = served_world
    created = post_check(alice.client, world, world.legacy([token_transfer(TOKEN, world.wallet_ata, world.other_ata, world.wallet, 5)])).json()
    url = f"{CHECKS}/{created['id']}"
    public = client.get(url)
    assert public.status_code == 200
    assert set(public.json()) == {"id", "decision", "reason_codes", "programs", "digest", "covered", "checked_at", "fresh_until", "receipt", "record_url", "reports"}
    assert str(world.wallet) not in public.content.decode()
    assert bob.client.get(url).json().keys() == public.json().keys()
    mine = alice.client.get(url).json()
    assert mine["effects"] == created["effects"] and mine["policy"]["wallet"] == str(world.wallet)


def test_an_unknown_verdict_is_a_404(client):
    assert client.get(f"{CHECKS}/pfc_AAAAAAAAAAAAAAAA").status_code == 404
    assert client.get(f"{CHECKS}/nope").json() == {"error": "No verdict has this id."}


def test_the_record_publishes_each_verdict_without_wallet_amounts_or_transaction(alice, client, served_world):
    world = served_world
    tx = world.legacy([sol_transfer(world.wallet, world.other, 123_456_789)])
    ids = [post_check(alice.client, world, tx, max_sol_out=1).json()["id"] for _ in range(3)]
    page = client.get("/api/v1/preflight/record?limit=2")
    assert page.status_code == 200
    body = page.json()
    assert [v["id"] for v in body["verdicts"]] == ids[::-1][:2]
    text = page.content.decode()
    assert str(world.wallet) not in text and "123456789" not in text and tx not in text
    rest = client.get(f"/api/v1/preflight/record?limit=2&cursor={body['next_cursor']}").json()
    assert [v["id"] for v in rest["verdicts"]] == [ids[0]] and rest["next_cursor"] is None
    assert client.get("/api/v1/preflight/record?limit=0").status_code == 400
    assert client.get("/api/v1/preflight/record?cursor=garbage").status_code == 400


def test_the_record_and_a_verdict_are_web_pages_for_people(alice, client, served_world):
    world = served_world
    verdict = post_check(alice.client, world, world.legacy([token_approve(TOKEN, world.wallet_ata, world.other, world.wallet, 1)])).json()
    page = client.get("/api/v1/preflight/record", HTTP_ACCEPT="text/html,application/xhtml+xml,*/*;q=0.8")
    assert page.status_code == 200 and page["Content-Type"].startswith("text/html")
    html = page.content.decode()
    assert verdict["id"] in html and "delegate_approved" in html and str(world.wallet) not in html
    one = client.get(f"{CHECKS}/{verdict['id']}", HTTP_ACCEPT="text/html")
    assert one.status_code == 200 and verdict["receipt"]["signature"] in one.content.decode()


def test_the_overview_states_the_guarantee_is_not_active(client):
    body = client.get("/api/v1/preflight").json()
    assert body["guarantee"]["active"] is False
    assert {p["address"] for p in body["guarantee"]["covered_programs"]} == set(constants.COVERED_PROGRAMS)
    assert [c["code"] for c in body["reason_codes"]] == list(constants.REASON_CODES)
    assert body["freshness_seconds"] == 120


def test_the_node_simulator_without_a_node_is_a_503(alice, world, settings):
    settings.PREFLIGHT_SIMULATOR = "rpc"
    settings.PREFLIGHT_RPC_URL = ""
    response = post_check(alice.client, world, world.legacy([sol_transfer(world.wallet, world.other, 1)]))
    assert response.status_code == 503


def test_the_same_idempotency_key_replays_the_same_verdict(alice, served_world):
    world = served_world
    body = {"transaction": world.legacy([sol_transfer(world.wallet, world.other, 1)]), "policy": world.policy()}
    first = alice.client.post(CHECKS, body, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    again = alice.client.post(CHECKS, body, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert again["Idempotency-Replayed"] == "true" and again.json()["id"] == first.json()["id"]


def test_an_address_that_is_not_base58_is_refused_cleanly():
    from rest_framework.exceptions import ValidationError

    from preflight.serializers import parse_address

    for value in ["0" * 44, "l" * 32, "\u0000" * 40, str(Pubkey.default())[:-1] + "!"]:
        with pytest.raises(ValidationError):
            parse_address(value, "wallet")


def test_the_digest_is_the_sha256_of_the_serialized_message(alice, served_world):
    import hashlib

    from solders.message import to_bytes_versioned
    from solders.transaction import VersionedTransaction

    world = served_world
    tx = world.legacy([sol_transfer(world.wallet, world.other, 1)])
    verdict = post_check(alice.client, world, tx).json()
    message = VersionedTransaction.from_bytes(base64.b64decode(tx)).message
    assert verdict["digest"] == hashlib.sha256(bytes(to_bytes_versioned(message))).hexdigest()
