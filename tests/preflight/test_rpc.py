"""The JSON-RPC simulator and reports, against a local node that answers in Solana's wire format."""

import base64
from datetime import timedelta

import pytest
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.message import Message
from solders.pubkey import Pubkey
from solders.transaction import VersionedTransaction

from core import safe_http
from core.errors import BadGateway, BadRequest, NotFound, ServiceUnavailable, Unprocessable
from preflight import constants, services
from preflight.checking import Policy
from preflight.simulators import LiteSvmSimulator, RpcClient, RpcSimulator
from tests.preflight.chain import (
    ATA,
    NATIVE_MINT,
    SOL,
    SYSTEM,
    TOKEN,
    TOKEN_RENT,
    ata_create_idempotent,
    sol_transfer,
    token_approve,
    token_close,
    token_transfer,
)
from tests.preflight.conftest import codes
from tests.preflight.fake_node import FakeNode

pytestmark = pytest.mark.django_db

FEE = 5_000


@pytest.fixture(autouse=True)
def _loopback():
    with safe_http.allow_loopback():
        yield


def node_check(world, node, transaction, simulator=None, **policy):
    limits = {"max_sol_out_lamports": 10_000_000, "max_token_out": {str(world.mint): 400_000}}
    limits.update(policy)
    simulator = simulator or RpcSimulator(RpcClient(node.url, timeout=5))
    return services.check_create(transaction=transaction, policy=Policy(wallet=world.wallet, **limits), simulator=simulator)


@pytest.mark.parametrize("agave3", [True, False], ids=["agave 3 with balances", "older node without"])
def test_a_transfer_checked_on_a_node_matches_the_in_process_verdict(world, agave3):
    tx = world.legacy([sol_transfer(world.wallet, world.other, 1_000_000), token_transfer(TOKEN, world.wallet_ata, world.other_ata, world.wallet, 5)])
    with FakeNode(world, agave3=agave3) as node:
        verdict = node_check(world, node, tx)
    local = node_check(world, None, tx, simulator=world.simulator)
    assert verdict.decision == local.decision == "allow"
    assert verdict.effects["sol"] == local.effects["sol"]
    assert verdict.effects["tokens"] == local.effects["tokens"]
    assert verdict.simulator == "rpc"
    # What the node was asked: pre-state first, then a simulation pinned to that slot.
    assert node.methods()[:2] == ["getMultipleAccounts", "simulateTransaction"]
    _, (_tx, config) = node.requests[1]
    assert config["sigVerify"] is False and config["replaceRecentBlockhash"] is True and config["innerInstructions"] is True
    assert config["minContextSlot"] == node.slot and config["encoding"] == "base64"
    assert config["accounts"]["encoding"] == "base64"
    assert config["accounts"]["addresses"][0] == str(world.wallet)
    assert {str(world.wallet_ata), str(world.other_ata), str(world.other)} <= set(config["accounts"]["addresses"])


def test_a_delegate_approved_is_read_from_the_accounts_the_node_returns(world):
    with FakeNode(world) as node:
        verdict = node_check(world, node, world.legacy([token_approve(TOKEN, world.wallet_ata, world.other, world.wallet, 9)]))
    assert codes(verdict) == ["delegate_approved"]


def test_inner_programs_reported_by_the_node_are_checked(world):
    with FakeNode(world) as node:
        tx = world.legacy([ata_create_idempotent(world.wallet, Keypair().pubkey(), world.mint)])
        verdict = node_check(world, node, tx, allowed_programs=frozenset({str(ATA)}))
    assert codes(verdict) == ["program_not_allowed"]
    assert {str(TOKEN), str(SYSTEM)} <= set(verdict.programs)
    assert verdict.effects["sol"]["out_lamports"] == str(TOKEN_RENT + FEE)


def test_lookup_tables_are_read_from_the_node(world):
    table = world.lookup_table([world.other_ata, world.mint, world.other])
    tx = world.v0([token_transfer(TOKEN, world.wallet_ata, world.other_ata, world.wallet, 7)], {table: [world.other_ata, world.mint, world.other]})
    with FakeNode(world) as node:
        verdict = node_check(world, node, tx)
        missing = node_check(world, node, world.v0([token_transfer(TOKEN, world.wallet_ata, world.other_ata, world.wallet, 7)], {Pubkey.new_unique(): [world.other_ata]}))
    assert verdict.decision == "allow" and verdict.effects["tokens"][0]["out"] == "7"
    assert codes(missing) == ["lookup_table_unreadable"]


def test_a_node_that_omits_the_accounts_gives_simulation_incomplete(world):
    with FakeNode(world, mode="omit_accounts") as node:
        verdict = node_check(world, node, world.legacy([sol_transfer(world.wallet, world.other, 1)]))
    assert codes(verdict) == ["simulation_incomplete"]
    assert verdict.covered is False


def test_a_node_that_answers_an_error_gives_simulation_failed(world):
    with FakeNode(world, mode="error") as node:
        verdict = node_check(world, node, world.legacy([sol_transfer(world.wallet, world.other, 1)]))
    assert codes(verdict) == ["simulation_failed"]
    assert "-32002" in verdict.reasons[0]["detail"]


def test_a_failing_transaction_on_the_node_gives_simulation_failed_with_its_error(world):
    with FakeNode(world) as node:
        verdict = node_check(world, node, world.legacy([sol_transfer(world.wallet, world.other, 50 * SOL)]), max_sol_out_lamports=100 * SOL)
    assert codes(verdict) == ["simulation_failed"]
    assert verdict.reasons[0]["detail"].startswith('{"InstructionError":[0,{"Custom":1}]}')


def test_a_node_that_cannot_be_reached_is_a_502_and_no_verdict(world):
    with FakeNode(world, mode="http_error") as node:
        with pytest.raises(BadGateway):
            node_check(world, node, world.legacy([sol_transfer(world.wallet, world.other, 1)]))
    closed = FakeNode(world)
    url = closed.url
    closed.server.server_close()
    with pytest.raises(BadGateway):
        services.check_create(transaction=world.legacy([sol_transfer(world.wallet, world.other, 1)]),
                              policy=Policy(wallet=world.wallet, max_sol_out_lamports=SOL), simulator=RpcSimulator(RpcClient(url, timeout=2)))
    assert not services.Check.objects.exists()


def test_the_node_is_refused_off_loopback_by_safe_http(world):
    with pytest.raises(BadGateway):
        services.check_create(transaction=world.legacy([sol_transfer(world.wallet, world.other, 1)]),
                              policy=Policy(wallet=world.wallet, max_sol_out_lamports=SOL),
                              simulator=RpcSimulator(RpcClient("http://10.0.0.1:8899/", timeout=2)))


def test_litesvm_forked_from_a_node_gives_the_same_verdict(world):
    tx = world.legacy([token_transfer(TOKEN, world.wallet_ata, world.other_ata, world.wallet, 400_001)])
    with FakeNode(world) as node:
        forked = LiteSvmSimulator(fork_from=RpcClient(node.url, timeout=5))
        verdict = node_check(world, node, tx, simulator=forked)
    assert codes(verdict) == ["token_out_exceeds_limit"] and verdict.simulator == "litesvm"
    assert "getMultipleAccounts" in node.methods() and "simulateTransaction" not in node.methods()


def test_the_rpc_simulator_through_the_api(alice, world, settings):
    with FakeNode(world) as node:
        settings.PREFLIGHT_SIMULATOR = "rpc"
        settings.PREFLIGHT_RPC_URL = node.url
        body = {"transaction": world.legacy([sol_transfer(world.wallet, world.other, 1)]), "policy": world.policy()}
        response = alice.client.post("/api/v1/preflight/checks", body, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["simulator"] == "rpc" and response.json()["decision"] == "allow"


# Reports


def _signed(world, instructions, signers=None):
    message = Message.new_with_blockhash(instructions, world.wallet, world.blockhash)
    return VersionedTransaction(message, signers or [world.wallet_keypair])


def _unsigned_b64(tx):
    return base64.b64encode(bytes(tx)).decode()


@pytest.fixture
def node(world, settings):
    with FakeNode(world) as running:
        settings.PREFLIGHT_RPC_URL = running.url
        yield running


def test_a_landed_transaction_that_matches_an_allow_is_recorded_without_a_miss(world, node, client):
    tx = _signed(world, [sol_transfer(world.wallet, world.other, 1_000)])
    verdict = node_check(world, None, _unsigned_b64(tx), simulator=world.simulator)
    signature = node.land(tx)
    response = client.post(f"/api/v1/preflight/checks/{verdict.id}/reports", {"signature": signature}, format="json")
    assert response.status_code == 201, response.content
    report = response.json()
    assert report["same_transaction"] and report["within_window"] and report["succeeded"] and report["found"]
    assert report["miss"] is False and report["exceeded"] == []
    assert report["chain"]["sol_out_lamports"] == str(1_000 + FEE)
    again = client.post(f"/api/v1/preflight/checks/{verdict.id}/reports", {"signature": signature}, format="json")
    assert again.status_code == 200 and again.json()["id"] == report["id"]
    published = client.get(f"/api/v1/preflight/checks/{verdict.id}").json()["reports"]
    assert [r["id"] for r in published] == [report["id"]] and "chain" not in published[0]


def test_state_that_changed_after_an_allow_so_the_same_transaction_took_more_is_a_covered_miss(world, node):
    # A wrapped-SOL account holding 0.001 SOL is closed to someone else: allowed under 0.01 SOL.
    from solders.token.associated import get_associated_token_address

    world.new_mint(key=NATIVE_MINT, decimals=9)
    wsol = world.token_account(world.wallet, NATIVE_MINT, SOL // 1000, native_rent=TOKEN_RENT, address=get_associated_token_address(world.wallet, NATIVE_MINT))
    tx = _signed(world, [token_close(TOKEN, wsol, world.other, world.wallet)])
    verdict = node_check(world, None, _unsigned_b64(tx), simulator=world.simulator)
    assert verdict.decision == "allow" and verdict.covered
    # Before it lands, 1 SOL is wrapped into the account: the same transaction now takes it all.
    world.token_account(world.wallet, NATIVE_MINT, SOL, native_rent=TOKEN_RENT, address=wsol)
    report, created = services.report_create(check_id=verdict.id, signature=node.land(tx))
    assert created and report.same_transaction and report.within_window
    assert report.exceeded == ["sol_out_exceeds_limit"]
    assert report.miss is True and report.covered_miss is True


def test_a_transaction_changed_after_the_check_is_not_a_miss(world, node):
    checked = _signed(world, [sol_transfer(world.wallet, world.other, 1_000)])
    verdict = node_check(world, None, _unsigned_b64(checked), simulator=world.simulator)
    landed = _signed(world, [sol_transfer(world.wallet, world.other, 5 * SOL)])
    report, _ = services.report_create(check_id=verdict.id, signature=node.land(landed))
    assert report.same_transaction is False and report.exceeded == ["sol_out_exceeds_limit"] and report.miss is False


def test_trailing_lighthouse_assertions_a_wallet_adds_keep_it_the_same_transaction(world, node):
    transfer = sol_transfer(world.wallet, world.other, 1_000)
    checked = _signed(world, [transfer])
    verdict = node_check(world, None, _unsigned_b64(checked), simulator=world.simulator)
    assertion = Instruction(Pubkey.from_string(constants.LIGHTHOUSE_PROGRAM), b"\x05\x00", [AccountMeta(world.wallet, False, False)])
    landed = _signed(world, [transfer, assertion])
    report, _ = services.report_create(check_id=verdict.id, signature=node.land(landed, run_as=checked))
    assert report.same_transaction is True
    other = _signed(world, [transfer, Instruction(Pubkey.from_string("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr"), b"x", [])])
    report, _ = services.report_create(check_id=verdict.id, signature=node.land(other, run_as=checked))
    assert report.same_transaction is False


def test_a_transaction_that_landed_after_the_window_is_outside_it(world, node):
    tx = _signed(world, [sol_transfer(world.wallet, world.other, 1_000)])
    verdict = node_check(world, None, _unsigned_b64(tx), simulator=world.simulator)
    late = (verdict.fresh_until + timedelta(seconds=5)).timestamp()
    report, _ = services.report_create(check_id=verdict.id, signature=node.land(tx, block_time=late))
    assert report.same_transaction and report.within_window is False and report.miss is False


def test_reports_that_cannot_be_made(world, node, settings, client):
    tx = _signed(world, [sol_transfer(world.wallet, world.other, 1_000)])
    verdict = node_check(world, None, _unsigned_b64(tx), simulator=world.simulator)
    with pytest.raises(Unprocessable):
        services.report_create(check_id=verdict.id, signature=str(tx.signatures[0]))  # never landed
    with pytest.raises(BadRequest):
        services.report_create(check_id=verdict.id, signature="not-a-signature")
    with pytest.raises(NotFound):
        services.report_create(check_id="pfc_AAAAAAAAAAAAAAAA", signature=str(tx.signatures[0]))
    settings.PREFLIGHT_RPC_URL = ""
    with pytest.raises(ServiceUnavailable):
        services.report_create(check_id=verdict.id, signature=str(tx.signatures[0]))
    response = client.post(f"/api/v1/preflight/checks/{verdict.id}/reports", {"signature": str(tx.signatures[0])}, format="json")
    assert response.status_code == 503 and "PREFLIGHT_RPC_URL" in response.json()["error"]


def test_reports_are_throttled_per_address(world, node, client, settings):
    settings.PREFLIGHT_REPORT_RATE = "2/h"
    tx = _signed(world, [sol_transfer(world.wallet, world.other, 1_000)])
    verdict = node_check(world, None, _unsigned_b64(tx), simulator=world.simulator)
    url = f"/api/v1/preflight/checks/{verdict.id}/reports"
    statuses = [client.post(url, {"signature": str(tx.signatures[0])}, format="json").status_code for _ in range(3)]
    assert statuses == [422, 422, 429]
