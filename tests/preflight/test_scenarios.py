"""Every reason code of spec 2.6 from a real LiteSVM simulation of a real transaction, and allowed
transactions that sit exactly at a limit. Effects are read from state diffs, fees and rent included."""

import struct

import pytest
from solders.hash import Hash
from solders.instruction import CompiledInstruction
from solders.keypair import Keypair
from solders.message import MessageAddressTableLookup, MessageHeader, MessageV0
from solders.pubkey import Pubkey
from solders.token.associated import get_associated_token_address

from preflight import constants
from tests.preflight.chain import (
    ACCOUNT_OWNER,
    ATA,
    CLOSE_ACCOUNT,
    COMPUTE_BUDGET,
    MEMO,
    NATIVE_MINT,
    SOL,
    SYSTEM,
    TOKEN,
    TOKEN_2022,
    TOKEN_RENT,
    advance_nonce,
    ata_create_idempotent,
    cu_limit,
    cu_price,
    encode,
    memo,
    sol_transfer,
    sync_native,
    system_assign,
    token_approve,
    token_close,
    token_set_authority,
    token_transfer,
    token_transfer_checked,
    unknown_program_call,
)
from tests.preflight.conftest import codes

FEE = 5_000  # one signature


# SOL, fees and rent


def test_a_small_sol_transfer_is_allowed_and_its_fee_counts_as_sol_out(world, check):
    verdict = check(world.legacy([sol_transfer(world.wallet, world.other, 5_000_000)]))
    assert verdict.decision == "allow" and verdict.reasons == []
    assert verdict.effects["sol"] == {"out_lamports": str(5_000_000 + FEE), "in_lamports": "0", "fee_lamports": str(FEE)}
    assert verdict.programs == [constants.SYSTEM_PROGRAM]
    assert verdict.covered is True


def test_a_transfer_that_takes_exactly_the_limit_with_its_fee_is_allowed(world, check):
    tx = world.legacy([sol_transfer(world.wallet, world.other, 10_000_000 - FEE)])
    assert check(tx, max_sol_out=0.01).decision == "allow"
    assert check(tx, max_sol_out=None, max_sol_out_lamports=10_000_000).decision == "allow"


def test_one_lamport_over_the_limit_is_refused_because_the_fee_counts(world, check):
    verdict = check(world.legacy([sol_transfer(world.wallet, world.other, 10_000_000 - FEE + 1)]))
    assert codes(verdict) == ["sol_out_exceeds_limit"]
    assert "10000001 lamports would leave" in verdict.reasons[0]["detail"]


def test_max_sol_out_zero_refuses_even_the_fee(world, check):
    verdict = check(world.legacy([memo("hello", world.wallet)]), max_sol_out=0)
    assert codes(verdict) == ["sol_out_exceeds_limit"]


def test_a_priority_fee_is_counted_in_sol_out(world, check):
    tx = world.legacy([cu_limit(200_000), cu_price(1_000_000), sol_transfer(world.wallet, world.other, 1)])
    verdict = check(tx, max_sol_out_lamports=FEE + 200_000 + 1, max_sol_out=None)
    assert verdict.decision == "allow"
    assert verdict.effects["sol"]["fee_lamports"] == str(FEE + 200_000)
    assert verdict.effects["sol"]["out_lamports"] == str(FEE + 200_000 + 1)
    assert codes(check(tx, max_sol_out_lamports=FEE + 200_000, max_sol_out=None)) == ["sol_out_exceeds_limit"]
    assert constants.COMPUTE_BUDGET_PROGRAM in verdict.programs


def test_rent_for_a_new_token_account_is_counted_and_inner_programs_are_listed(world, check):
    stranger = Keypair().pubkey()
    tx = world.legacy([ata_create_idempotent(world.wallet, stranger, world.mint)])
    verdict = check(tx, allowed_programs=[str(SYSTEM), str(TOKEN), str(ATA)])
    assert verdict.decision == "allow"
    assert verdict.effects["sol"]["out_lamports"] == str(TOKEN_RENT + FEE)
    assert verdict.programs[0] == str(ATA)
    assert {str(TOKEN), str(SYSTEM)} <= set(verdict.programs)  # run by CPI, seen in the inner instructions
    assert verdict.covered is True


def test_a_program_run_only_by_cpi_must_be_allowed_too(world, check):
    verdict = check(world.legacy([ata_create_idempotent(world.wallet, Keypair().pubkey(), world.mint)]), allowed_programs=[str(ATA)])
    assert codes(verdict) == ["program_not_allowed"]
    assert str(TOKEN) in verdict.reasons[0]["detail"] and str(SYSTEM) in verdict.reasons[0]["detail"]


def test_a_program_outside_the_guarantee_is_run_but_not_covered_and_refused_when_not_allowed(world, check):
    tx = world.legacy([memo("gm", world.wallet), sol_transfer(world.wallet, world.other, 1)])
    verdict = check(tx)
    assert verdict.decision == "allow" and verdict.covered is False
    assert str(MEMO) in verdict.programs
    refused = check(tx, allowed_programs=[str(SYSTEM)])
    assert codes(refused) == ["program_not_allowed"] and str(MEMO) in refused.reasons[0]["detail"]


def test_an_undeployed_program_makes_the_simulation_fail(world, check):
    verdict = check(world.legacy([unknown_program_call(Pubkey.new_unique(), world.wallet)]))
    assert codes(verdict) == ["simulation_failed"]
    assert verdict.covered is False


def test_spending_more_sol_than_the_wallet_has_fails_the_simulation(world, check):
    verdict = check(world.legacy([sol_transfer(world.wallet, world.other, 50 * SOL)]), max_sol_out=100)
    assert codes(verdict) == ["simulation_failed"]
    assert "InstructionError" in verdict.reasons[0]["detail"]


# Tokens


def test_a_token_transfer_exactly_at_its_limit_is_allowed(world, check):
    verdict = check(world.legacy([token_transfer(TOKEN, world.wallet_ata, world.other_ata, world.wallet, 400_000)]))
    assert verdict.decision == "allow"
    assert verdict.effects["tokens"] == [{"mint": str(world.mint), "program": str(TOKEN), "out": "400000", "in": "0"}]


def test_one_unit_over_the_token_limit_is_refused(world, check):
    verdict = check(world.legacy([token_transfer_checked(TOKEN, world.wallet_ata, world.mint, world.other_ata, world.wallet, 400_001)]))
    assert codes(verdict) == ["token_out_exceeds_limit"]


def test_a_mint_not_listed_may_not_leave_at_all(world, check):
    verdict = check(world.legacy([token_transfer(TOKEN, world.wallet_ata, world.other_ata, world.wallet, 1)]), max_token_out={})
    assert codes(verdict) == ["token_out_exceeds_limit"]
    assert "not listed" in verdict.reasons[0]["detail"]


def test_a_token_2022_transfer_is_read_from_its_accounts(world, check):
    tx = world.legacy([token_transfer_checked(TOKEN_2022, world.wallet_ata22, world.mint22, world.other_ata22, world.wallet, 100)])
    verdict = check(tx)
    assert verdict.decision == "allow"
    assert verdict.effects["tokens"] == [{"mint": str(world.mint22), "program": str(TOKEN_2022), "out": "100", "in": "0"}]
    assert codes(check(tx, max_token_out={str(world.mint22): 99})) == ["token_out_exceeds_limit"]


def _swap_like(world, amount_in):
    """The wallet pays 300 000 of one mint and receives `amount_in` of Token-2022 mint from the other party."""
    world.token_account(world.other, world.mint22, 10_000, program=TOKEN_2022)
    return world.legacy([
        token_transfer(TOKEN, world.wallet_ata, world.other_ata, world.wallet, 300_000),
        token_transfer_checked(TOKEN_2022, world.other_ata22, world.mint22, world.wallet_ata22, world.other, amount_in),
    ])


def test_what_arrives_must_reach_min_token_in(world, check):
    minimum = {str(world.mint22): 5_000}
    assert check(_swap_like(world, 5_000), min_token_in=minimum).decision == "allow"
    verdict = check(_swap_like(world, 4_999), min_token_in=minimum)
    assert codes(verdict) == ["token_in_below_minimum"]
    assert verdict.effects["tokens"][0]["in"] == "4999" or verdict.effects["tokens"][1]["in"] == "4999"


def test_a_mint_in_min_token_in_that_never_arrives_is_refused(world, check):
    verdict = check(world.legacy([sol_transfer(world.wallet, world.other, 1)]), min_token_in={str(world.mint): 1})
    assert codes(verdict) == ["token_in_below_minimum"]


# Authority


def test_approving_a_delegate_is_refused_unless_delegation_is_allowed(world, check):
    tx = world.legacy([token_approve(TOKEN, world.wallet_ata, world.other, world.wallet, 2**64 - 1)])
    refused = check(tx)
    assert codes(refused) == ["delegate_approved"]
    assert refused.effects["delegations"] == [
        {"account": str(world.wallet_ata), "mint": str(world.mint), "delegate": str(world.other), "amount": str(2**64 - 1)}
    ]
    assert check(tx, allow_delegation=True).decision == "allow"


def test_a_delegate_approved_on_a_token_2022_account_is_caught(world, check):
    tx = world.legacy([token_approve(TOKEN_2022, world.wallet_ata22, world.other, world.wallet, 5)])
    assert codes(check(tx)) == ["delegate_approved"]


def test_handing_a_token_account_to_another_owner_is_refused_and_its_balance_counts_as_out(world, check):
    tx = world.legacy([token_set_authority(TOKEN, world.wallet_ata, world.wallet, ACCOUNT_OWNER, world.other)])
    verdict = check(tx)
    assert codes(verdict) == ["token_account_owner_changed", "token_out_exceeds_limit"]
    assert verdict.effects["owner_changes"] == [{"account": str(world.wallet_ata), "mint": str(world.mint), "owner": str(world.other)}]
    assert verdict.effects["tokens"][0]["out"] == "1000000"


def test_an_empty_token_account_handed_over_is_still_an_owner_change(world, check):
    empty = world.token_account(world.wallet, world.mint, 0, address=Pubkey.new_unique())
    verdict = check(world.legacy([token_set_authority(TOKEN, empty, world.wallet, ACCOUNT_OWNER, world.other)]))
    assert codes(verdict) == ["token_account_owner_changed"]


def test_a_close_authority_handed_to_another_party_counts_as_a_spending_approval(world, check):
    tx = world.legacy([token_set_authority(TOKEN, world.wallet_ata, world.wallet, CLOSE_ACCOUNT, world.other)])
    verdict = check(tx)
    assert codes(verdict) == ["delegate_approved"]
    assert "close authority" in verdict.reasons[0]["detail"]
    assert verdict.effects["close_authorities"][0]["close_authority"] == str(world.other)
    assert check(tx, allow_delegation=True).decision == "allow"


def test_assigning_the_wallet_to_a_program_is_refused(world, check):
    verdict = check(world.legacy([system_assign(world.wallet, TOKEN)]))
    assert codes(verdict) == ["wallet_reassigned"]
    assert verdict.effects["wallet_owner"] == {"before": str(SYSTEM), "after": str(TOKEN)}


# Wrapped SOL is the wallet's SOL


def _wsol(world, amount):
    address = get_associated_token_address(world.wallet, NATIVE_MINT)
    if world.vm().get_account(NATIVE_MINT) is None:
        world.new_mint(key=NATIVE_MINT, decimals=9)
    return world.token_account(world.wallet, NATIVE_MINT, amount, native_rent=TOKEN_RENT, address=address)


def test_wrapped_sol_closed_to_someone_else_counts_against_max_sol_out(world, check):
    account = _wsol(world, 1 * SOL)
    verdict = check(world.legacy([token_close(TOKEN, account, world.other, world.wallet)]))
    assert codes(verdict) == ["sol_out_exceeds_limit"]
    assert verdict.effects["sol"]["out_lamports"] == str(1 * SOL + FEE)


def test_unwrapping_to_oneself_and_wrapping_move_nothing_but_the_fee_and_rent(world, check):
    account = _wsol(world, 1 * SOL)
    unwrap = check(world.legacy([token_close(TOKEN, account, world.wallet, world.wallet)]))
    assert unwrap.decision == "allow"
    assert unwrap.effects["sol"]["in_lamports"] == str(TOKEN_RENT - FEE)  # the account's rent comes back
    wrap = check(world.legacy([sol_transfer(world.wallet, account, 2 * SOL), sync_native(account)]))
    assert wrap.decision == "allow" and wrap.effects["sol"]["out_lamports"] == str(FEE)


def test_the_rent_of_an_empty_token_account_closed_to_someone_else_is_not_the_wallets_sol(world, check):
    empty = world.token_account(world.wallet, world.mint, 0, address=Pubkey.new_unique())
    verdict = check(world.legacy([token_close(TOKEN, empty, world.other, world.wallet)]))
    assert verdict.decision == "allow" and verdict.effects["sol"]["out_lamports"] == str(FEE)


# Decided before any simulation


def test_a_wallet_that_does_not_sign_is_refused_before_simulating(world, check):
    verdict = check(world.legacy([sol_transfer(world.other, world.wallet, 1)], payer=world.other))
    assert codes(verdict) == ["wallet_not_a_signer"]
    assert verdict.effects["units_consumed"] is None


def _loaded_program_message(world, table):
    # The only instruction names its program by an index that points into the loaded addresses.
    header = MessageHeader(num_required_signatures=1, num_readonly_signed_accounts=0, num_readonly_unsigned_accounts=0)
    ix = CompiledInstruction(program_id_index=1, data=b"\x02\x00\x00\x00" + struct.pack("<Q", 1), accounts=bytes([0, 1]))
    lookup = MessageAddressTableLookup(account_key=table, writable_indexes=bytes([0]), readonly_indexes=b"")
    return MessageV0(header, [world.wallet], Hash.new_unique(), [ix], [lookup])


def test_a_program_loaded_from_a_lookup_table_is_unresolved(world, check):
    table = world.lookup_table([SYSTEM])
    verdict = check(encode(_loaded_program_message(world, table)))
    assert codes(verdict) == ["program_unresolved"]


def test_a_v0_transaction_with_a_lookup_table_is_simulated_with_the_loaded_accounts(world, check):
    table = world.lookup_table([world.other_ata, world.mint, world.other])
    tx = world.v0([token_transfer_checked(TOKEN, world.wallet_ata, world.mint, world.other_ata, world.wallet, 250_000),
                   sol_transfer(world.wallet, world.other, 1_000)], {table: [world.other_ata, world.mint, world.other]})
    verdict = check(tx)
    assert verdict.decision == "allow"
    assert verdict.effects["tokens"][0]["out"] == "250000"
    assert verdict.effects["sol"]["out_lamports"] == str(1_000 + FEE)


def test_a_token_account_of_the_wallet_loaded_from_a_lookup_table_is_watched(world, check):
    table = world.lookup_table([world.wallet_ata, world.other_ata])
    tx = world.v0([token_transfer(TOKEN, world.wallet_ata, world.other_ata, world.wallet, 400_001)], {table: [world.wallet_ata, world.other_ata]})
    assert codes(check(tx)) == ["token_out_exceeds_limit"]


@pytest.mark.parametrize("problem", ["missing", "index past the end", "deactivated", "extended this slot", "not a table"])
def test_an_unreadable_lookup_table_is_refused_before_simulating(world, check, problem):
    addresses = [world.other_ata, world.mint, world.other]
    key = Pubkey.new_unique()
    compiled_against = addresses
    if problem == "index past the end":
        world.lookup_table(addresses, key=key)
        compiled_against = [Pubkey.new_unique()] * 5 + addresses
    elif problem == "deactivated":
        world.lookup_table(addresses, key=key, deactivation_slot=10)
    elif problem == "extended this slot":
        world.lookup_table(addresses, key=key, last_extended_slot=world.simulator.slot, start_index=0)
    elif problem == "not a table":
        world.fund(key, SOL)
    tx = world.v0([token_transfer(TOKEN, world.wallet_ata, world.other_ata, world.wallet, 1)], {key: compiled_against})
    verdict = check(tx)
    assert codes(verdict) == ["lookup_table_unreadable"]
    assert str(key) in verdict.reasons[0]["detail"]


def test_a_transaction_that_writes_to_more_accounts_than_one_check_reads_is_refused(world, check, settings):
    settings.PREFLIGHT_MAX_ACCOUNTS = 3
    tx = world.legacy([sol_transfer(world.wallet, Pubkey.new_unique(), 1) for _ in range(3)])
    verdict = check(tx)
    assert codes(verdict) == ["too_many_accounts"]
    assert "4 accounts" in verdict.reasons[0]["detail"]


def test_many_writable_accounts_from_a_lookup_table_count_toward_the_cap(world, check):
    from solders.instruction import AccountMeta, Instruction

    recipients = [Pubkey.new_unique() for _ in range(64)]
    table = world.lookup_table(recipients)
    touch_all = Instruction(MEMO, b"x", [AccountMeta(r, False, True) for r in recipients])
    verdict = check(world.v0([touch_all], {table: recipients}))
    assert codes(verdict) == ["too_many_accounts"]
    assert "65 accounts" in verdict.reasons[0]["detail"]


# Open cases


def test_a_durable_nonce_transaction_is_judged_and_named_in_the_effects(world, check):
    nonce = Pubkey.new_unique()
    data = struct.pack("<II", 1, 1) + bytes(world.wallet) + bytes(Hash.new_unique()) + struct.pack("<Q", 5_000)
    from solders.account import Account

    world.put(nonce, Account(lamports=world.vm().minimum_balance_for_rent_exemption(80), data=data, owner=SYSTEM))
    verdict = check(world.legacy([advance_nonce(nonce, world.wallet), sol_transfer(world.wallet, world.other, 1_000)]))
    assert verdict.effects["durable_nonce"] == str(nonce)
    assert verdict.decision == "allow", verdict.reasons
    assert verdict.effects["sol"]["out_lamports"] == str(1_000 + FEE)


def test_the_same_message_signed_or_not_has_the_same_digest(world, check):
    import base64

    from solders.message import Message
    from solders.transaction import VersionedTransaction

    message = Message.new_with_blockhash([sol_transfer(world.wallet, world.other, 7)], world.wallet, world.blockhash)
    signed = base64.b64encode(bytes(VersionedTransaction(message, [world.wallet_keypair]))).decode()
    first, second = check(encode(message)), check(signed)
    assert first.digest == second.digest and len(first.digest) == 64
    assert first.id != second.id


def test_compute_budget_alone_is_on_the_covered_list(world, check):
    verdict = check(world.legacy([cu_limit(10_000), sol_transfer(world.wallet, world.other, 1)]))
    assert verdict.programs == [str(COMPUTE_BUDGET), str(SYSTEM)] and verdict.covered is True


def test_a_token_2022_account_with_extensions_created_in_the_transaction_counts_what_arrives(world, check):
    mint = world.new_mint(program=TOKEN_2022)
    source = world.token_account(world.other, mint, 1_000, program=TOKEN_2022, address=Pubkey.new_unique())
    destination = get_associated_token_address(world.wallet, mint, TOKEN_2022)
    instructions = [
        ata_create_idempotent(world.wallet, world.wallet, mint, TOKEN_2022),
        token_transfer_checked(TOKEN_2022, source, mint, destination, world.other, 500),
    ]
    from solders.message import Message

    tx = encode(Message.new_with_blockhash(instructions, world.wallet, world.blockhash))
    verdict = check(tx, min_token_in={str(mint): 500})
    assert verdict.decision == "allow", verdict.reasons
    assert verdict.effects["tokens"] == [{"mint": str(mint), "program": str(TOKEN_2022), "out": "0", "in": "500"}]
    assert codes(check(tx, min_token_in={str(mint): 501})) == ["token_in_below_minimum"]


def test_the_check_request_parser_for_other_surfaces_names_the_field():
    from core.errors import BadRequest
    from preflight import services

    with pytest.raises(BadRequest) as raised:
        services.check_request_parse({"transaction": "AAAA", "policy": {"wallet": "x", "max_sol_out": 1}})
    assert raised.value.message == "policy: wallet is not a Solana address (base58, 32 to 44 characters)."
    with pytest.raises(BadRequest):
        services.check_request_parse([1, 2])
