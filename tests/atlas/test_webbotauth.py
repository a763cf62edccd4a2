"""Web Bot Auth: the published vectors, and a local signing agent with its own key directory over TLS."""

import base64
import datetime
import json
from pathlib import Path

import pytest
from http_message_signatures import HTTPMessageVerifier, MappingKeyResolver

from atlas import webbotauth
from atlas.models import Agent
from core import safe_http
from tests.atlas.wba_servers import SigningAgent

VECTORS = Path(__file__).parent / "data" / "web-bot-auth"
RFC_JWK = {"kty": "OKP", "crv": "Ed25519", "x": "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"}
RFC_KEYID = "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U"
VECTOR_DIRECTORY = "https://signature-agent.test/.well-known/http-message-signatures-directory"
URL = "https://example.com/path/to/resource"

W1 = {
    "Signature-Agent": 'agent2="https://signature-agent.test"',
    "Signature-Input": 'sig2=("@authority" "signature-agent";key="agent2");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="n9p433xm+NJ3ph3upfBIGmsuwHw387YV7Q/F+6BSpGCVjYCqQw6rznNA8PVVLySrAWsv0hQtFioQb6E1YsauiA==";tag="web-bot-auth"',
    "Signature": "sig2=:RdNFx5Bj6au3YgAMQL/RzmUlZE8QZLIaXGRpw985hWnwPfMxT228NMk6ehRS1PSl4e8PhbNZACSanGdhEwYCCg==:",
}
W4 = {
    "Signature-Input": 'sig1=("@authority");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=4889289600;nonce="zIW8+cdmA3vdYagbxojpONwa/l0EKJ/O3/wD486VvsQjO/RxPaSt6ZxvQaMcQzNnqKN/mQ6hpGiFro2L2qkz5A==";tag="web-bot-auth"',
    "Signature": "sig1=:QKN4fTdIYfh82fvoZCQiQA1weuozfCS/Led2zTMbewMMqH8PI2Wsy/5c4ao6B6D09nraNQdBNOADg8aM1MqfCg==:",
}
W5 = {
    "Signature-Agent": '"https://signature-agent.test"',
    "Signature-Input": 'sig2=("@authority" "signature-agent");created=1735689600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";alg="ed25519";expires=1735693200;nonce="e8N7S2MFd/qrd6T2R3tdfAuuANngKI7LFtKYI/vowzk4lAZYadIX6wW25MwG7DCT9RUKAJ0qVkU0mEeLElW1qg==";tag="web-bot-auth"',
    "Signature": "sig2=:jdq0SqOwHdyHr9+r5jw3iYZH6aNGKijYp/EstF4RQTQdi5N5YYKrD+mCT1HA1nZDsi6nJKuHxUi/5Syp3rLWBA==:",
}


def vector(headers, url=URL, **kwargs):
    keys = {(VECTOR_DIRECTORY, RFC_KEYID): RFC_JWK}
    return webbotauth.verify_request(method="GET", url=url, headers=headers, keys=keys, **kwargs)


def test_the_rfc_test_key_thumbprint_is_the_keyid_of_the_vectors():
    assert webbotauth.jwk_thumbprint(RFC_JWK) == RFC_KEYID
    assert webbotauth.jwk_thumbprint(json.loads((VECTORS / "rfc9421-ed25519.json").read_text())) == RFC_KEYID


def test_w1_the_dictionary_signature_agent_vector_verifies_with_the_key_injected():
    outcome = vector(W1, allow_test_keys=True)
    assert outcome.outcome == "verified" and outcome.directory == VECTOR_DIRECTORY
    assert outcome.advisories  # a 100-year lifetime is flagged, not refused


def test_the_published_test_key_is_refused_outside_offline_vector_checks():
    outcome = vector(W1)
    assert outcome.outcome == "invalid" and "test key" in outcome.reason


def test_w2_a_tampered_signature_agent_is_invalid():
    headers = {**W1, "Signature-Agent": 'agent2="https://attacker.test"'}
    keys = {("https://attacker.test/.well-known/http-message-signatures-directory", RFC_KEYID): RFC_JWK}
    outcome = webbotauth.verify_request(method="GET", url=URL, headers=headers, keys=keys, allow_test_keys=True)
    assert outcome.outcome == "invalid"


def test_w3_the_same_signature_sent_to_another_host_is_invalid():
    assert vector(W1, url="https://evil.example/path/to/resource", allow_test_keys=True).outcome == "invalid"


def test_w4_without_signature_agent_the_key_is_named_but_nothing_is_attributed():
    outcome = vector(W4, allow_test_keys=True)
    assert outcome.outcome == "unverified" and outcome.keyid == RFC_KEYID and outcome.directory is None


def test_w5_the_legacy_string_form_parses_and_its_expiry_is_enforced():
    outcome = vector(W5, allow_test_keys=True)
    assert outcome.outcome == "invalid" and "expired" in outcome.reason


def _cloudflare_vectors(name):
    return json.loads((VECTORS / name).read_text())


@pytest.mark.parametrize("index", range(4))
def test_the_cloudflare_v2_vectors_verify_when_they_name_an_agent_and_are_unattributed_otherwise(index):
    case = _cloudflare_vectors("web_bot_auth_architecture_v2.json")[index]
    jwk = {k: v for k, v in case["key"].items() if k in ("kty", "crv", "x", "n", "e")}
    headers = {"Signature-Input": case["signature_input"], "Signature": case["signature"]}
    if case.get("signature_agent"):
        headers["Signature-Agent"] = case["signature_agent"]
    keyid = webbotauth.jwk_thumbprint(jwk)
    outcome = webbotauth.verify_request(method="GET", url=case["target_url"], headers=headers,
                                        keys={(VECTOR_DIRECTORY, keyid): jwk}, allow_test_keys=True)
    expected = "verified" if case.get("signature_agent") else "unverified"  # RSA-PSS (W6) and Ed25519 alike
    assert outcome.outcome == expected, outcome


@pytest.mark.parametrize("index", range(4))
def test_the_cloudflare_v1_vectors_have_expired(index):
    case = _cloudflare_vectors("web_bot_auth_architecture_v1.json")[index]
    headers = {"Signature-Input": case["signature_input"], "Signature": case["signature"]}
    if case.get("signature_agent"):
        headers["Signature-Agent"] = case["signature_agent"]
    outcome = webbotauth.verify_request(method="GET", url=case["target_url"], headers=headers, allow_test_keys=True)
    assert outcome.outcome == "invalid" and "expired" in outcome.reason


def test_w7_another_tag_is_not_a_web_bot_auth_signature():
    headers = {**W1, "Signature-Input": W1["Signature-Input"].replace('tag="web-bot-auth"', 'tag="not-web-bot-auth"')}
    assert vector(headers, allow_test_keys=True).outcome == "absent"


def test_the_rfc_9421_b26_ed25519_example_verifies_with_the_same_key():
    message = type("M", (), {})()
    message.method, message.url = "POST", "https://example.com/foo?param=Value&Pet=dog"
    message.headers = {
        "Host": "example.com", "Date": "Tue, 20 Apr 2021 02:07:55 GMT", "Content-Type": "application/json",
        "Content-Length": "18",
        "Signature-Input": 'sig-b26=("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519"',
        "Signature": "sig-b26=:wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==:",
    }
    key, algorithm = webbotauth._key_of(RFC_JWK)
    verifier = HTTPMessageVerifier(signature_algorithm=algorithm,
                                   key_resolver=MappingKeyResolver(public_keys={"test-key-ed25519": key}, private_keys={}))
    assert verifier.verify(message, max_age=None)
    assert webbotauth.verify_request(method="POST", url=message.url, headers=message.headers).outcome == "absent"


# A local agent with its own directory, end to end through the API -------------------------------


@pytest.fixture
def agent(tmp_path, fake_dns, monkeypatch):
    fake_dns({"agent.acme-agents.com": ["127.0.0.1"]})
    signing = SigningAgent(tmp_path)
    monkeypatch.setattr(safe_http, "TLS_CA_BUNDLE", signing.ca_file)
    with safe_http.allow_loopback():
        yield signing
    signing.stop()


@pytest.fixture
def listed(db, agent):
    """A registry entry whose key directory is the local agent's."""
    return Agent.objects.create(slug="acme-signer", name="Acme Signer", operator="Acme Robotics", purpose="browser_agent",
                                kind="agent", user_agent_tokens=["AcmeSigner"], user_agents="AcmeSigner/1.0",
                                web_bot_auth_key_directory=agent.directory, verification="web_bot_auth")


def check(client, agent, headers, url="https://atlas.example/page", user_agent="Mozilla/5.0 AcmeSigner/1.0"):
    from atlas.registry import registry_changed

    registry_changed()
    response = client.post("/api/v1/atlas/lookup/verify", {"user_agent": user_agent, "url": url, "headers": headers},
                           format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def test_a_signed_request_from_a_local_agent_verifies_end_to_end(client, agent, listed):
    body = check(client, agent, agent.sign("https://atlas.example/page"))
    assert body["verified"] is True and body["verdict"] == "web_bot_auth"
    assert body["checks"]["web_bot_auth"]["directory"] == agent.directory
    assert body["agent"]["slug"] == "acme-signer"
    assert agent.requests == ["/.well-known/http-message-signatures-directory"]
    check(client, agent, agent.sign("https://atlas.example/page"))
    assert len(agent.requests) == 1  # the directory is cached


def test_the_legacy_signature_agent_string_verifies_too(client, agent, listed):
    body = check(client, agent, agent.sign("https://atlas.example/page", agent_header=f'"{agent.origin}"'))
    assert body["verified"] is True


def test_a_tampered_request_is_invalid_and_the_claim_unattributable(client, agent, listed):
    headers = agent.sign("https://atlas.example/page")
    label, _, value = headers["Signature"].partition("=:")
    raw = bytearray(base64.b64decode(value.rstrip(":")))
    raw[0] ^= 1  # one bit of the signature flipped
    headers["Signature"] = f"{label}=:{base64.b64encode(bytes(raw)).decode()}:"
    body = check(client, agent, headers)
    assert body["verified"] is False and body["verdict"] == "unattributable"
    assert body["checks"]["web_bot_auth"]["outcome"] == "invalid"


def test_an_expired_signature_is_invalid(client, agent, listed):
    old = datetime.datetime.now(datetime.UTC) - datetime.timedelta(hours=2)
    body = check(client, agent, agent.sign("https://atlas.example/page", created=old, lifetime=60))
    assert body["checks"]["web_bot_auth"]["outcome"] == "invalid" and "expired" in body["checks"]["web_bot_auth"]["reason"]
    assert body["verified"] is False


def test_a_signature_for_another_host_is_invalid(client, agent, listed):
    body = check(client, agent, agent.sign("https://atlas.example/page"), url="https://elsewhere.example/page")
    assert body["checks"]["web_bot_auth"]["outcome"] == "invalid" and body["verified"] is False


def test_a_test_key_in_a_directory_is_refused(client, agent, listed):
    agent.directory_body = json.dumps({"keys": [RFC_JWK]}).encode()
    keys, error = webbotauth.directory_keys(agent.directory, refresh=True)
    assert keys == {} and "test key" in error


def test_an_unreachable_directory_leaves_the_claim_unverified(client, agent, listed):
    headers = agent.sign("https://atlas.example/page")
    agent.stop()
    body = check(client, agent, headers)
    assert body["checks"]["web_bot_auth"]["outcome"] == "unverified" and body["verified"] is False


def test_a_failed_fetch_keeps_the_cached_keys_and_a_successful_one_replaces_them(db, agent):
    keys, _ = webbotauth.directory_keys(agent.directory, refresh=True)
    assert agent.keyid in keys
    agent.status = 500
    kept, error = webbotauth.directory_keys(agent.directory, refresh=True)
    assert agent.keyid in kept and "500" in error
    agent.status = 200
    agent.directory_body = b'{"keys": []}'
    _, error = webbotauth.directory_keys(agent.directory, refresh=True)
    assert "no usable key" in error


def test_a_directory_that_redirects_or_is_not_a_jwks_is_refused(db, agent):
    agent.content_type = "text/html"
    assert "text/html" in webbotauth.directory_keys(agent.directory, refresh=True)[1]
    agent.content_type = webbotauth.MEDIA_TYPE
    agent.directory_body = b"not json"
    assert "not JSON" in webbotauth.directory_keys(agent.directory, refresh=True)[1]


def test_a_registration_whose_key_directory_answers_is_listed_as_signed(alice, agent, settings, fake_dns):
    from tests.accounts.proof_servers import LoopbackDns

    fake_dns({"acme-agents.com": ["127.0.0.1"]})
    dns = LoopbackDns()
    settings.DOMAIN_PROOF_NAMESERVERS = [f"127.0.0.1:{dns.port}"]
    try:
        created = alice.client.post("/api/v1/atlas/registrations", {
            "name": "Acme Browser", "operator": "Acme Robotics", "domain": "acme-agents.com", "tokens": ["AcmeBrowser"],
            "purpose": "browser_agent", "key_directory_url": agent.origin}, format="json").json()
        dns.publish("_svc-atlas.acme-agents.com", created["verification"]["value"])
        published = alice.client.post(f"/api/v1/atlas/registrations/{created['id']}/verify").json()
    finally:
        dns.stop()
    assert published["status"] == "published" and published["key_directory_ok"] is True
    assert published["agent"]["verification"] == "web_bot_auth"
    assert published["agent"]["web_bot_auth_key_directory"] == agent.directory


def test_a_signed_request_to_this_service_is_sighted_as_verified(client, agent, listed):
    from atlas.models import Sighting

    webbotauth.directory_keys(agent.directory, refresh=True)  # sightings use cached keys only, never fetch
    headers = agent.sign("http://testserver/api/v1/atlas")
    extra = {f"HTTP_{name.upper().replace('-', '_')}": value for name, value in headers.items()}
    client.get("/api/v1/atlas", HTTP_USER_AGENT="Mozilla/5.0 AcmeSigner/1.0", **extra)
    tampered = {**extra, "HTTP_SIGNATURE_AGENT": extra["HTTP_SIGNATURE_AGENT"].replace("sig1", "sig2")}
    client.get("/api/v1/atlas", HTTP_USER_AGENT="Mozilla/5.0 AcmeSigner/1.0", **tampered)
    row = Sighting.objects.get(agent_slug="acme-signer")
    assert (row.requests, row.verified, row.failed) == (2, 1, 1)
