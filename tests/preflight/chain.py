"""A small Solana world for the tests: accounts in LiteSVM, and real instructions built byte by byte.

Transactions are real serialized legacy or v0 messages with zero signatures, as a caller would post.
"""

import base64
import struct

from solders.account import Account
from solders.address_lookup_table_account import AddressLookupTableAccount
from solders.hash import Hash
from solders.instruction import AccountMeta, Instruction
from solders.keypair import Keypair
from solders.message import Message, MessageV0
from solders.pubkey import Pubkey
from solders.signature import Signature
from solders.system_program import AssignParams, TransferParams, assign, transfer
from solders.token.associated import get_associated_token_address
from solders.token.state import Mint, TokenAccount, TokenAccountState
from solders.transaction import VersionedTransaction

from preflight import constants
from preflight.simulators import LiteSvmSimulator

SYSTEM = Pubkey.from_string(constants.SYSTEM_PROGRAM)
COMPUTE_BUDGET = Pubkey.from_string(constants.COMPUTE_BUDGET_PROGRAM)
TOKEN = Pubkey.from_string(constants.TOKEN_PROGRAM)
TOKEN_2022 = Pubkey.from_string(constants.TOKEN_2022_PROGRAM)
ATA = Pubkey.from_string(constants.ASSOCIATED_TOKEN_PROGRAM)
ALT = Pubkey.from_string(constants.LOOKUP_TABLE_PROGRAM)
MEMO = Pubkey.from_string("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr")
NATIVE_MINT = Pubkey.from_string("So11111111111111111111111111111111111111112")
SOL = 1_000_000_000
TOKEN_RENT = 2_039_280  # rent-exempt minimum of a 165-byte token account


def sol_transfer(source, destination, lamports):
    return transfer(TransferParams(from_pubkey=source, to_pubkey=destination, lamports=lamports))


def system_assign(account, owner):
    return assign(AssignParams(pubkey=account, owner=owner))


def advance_nonce(nonce, authority):
    return Instruction(SYSTEM, struct.pack("<I", 4), [
        AccountMeta(nonce, False, True),
        AccountMeta(Pubkey.from_string("SysvarRecentB1ockHashes11111111111111111111"), False, False),
        AccountMeta(authority, True, False)])


def token_transfer(program, source, destination, owner, amount):
    return Instruction(program, bytes([3]) + struct.pack("<Q", amount), [
        AccountMeta(source, False, True), AccountMeta(destination, False, True), AccountMeta(owner, True, False)])


def token_transfer_checked(program, source, mint, destination, owner, amount, decimals=6):
    return Instruction(program, bytes([12]) + struct.pack("<QB", amount, decimals), [
        AccountMeta(source, False, True), AccountMeta(mint, False, False),
        AccountMeta(destination, False, True), AccountMeta(owner, True, False)])


def token_approve(program, source, delegate, owner, amount):
    return Instruction(program, bytes([4]) + struct.pack("<Q", amount), [
        AccountMeta(source, False, True), AccountMeta(delegate, False, False), AccountMeta(owner, True, False)])


ACCOUNT_OWNER, CLOSE_ACCOUNT = 2, 3


def token_set_authority(program, account, current, kind, new):
    data = bytes([6, kind]) + (b"\x01" + bytes(new) if new else b"\x00")
    return Instruction(program, data, [AccountMeta(account, False, True), AccountMeta(current, True, False)])


def token_close(program, account, destination, owner):
    return Instruction(program, bytes([9]), [
        AccountMeta(account, False, True), AccountMeta(destination, False, True), AccountMeta(owner, True, False)])


def sync_native(account):
    return Instruction(TOKEN, bytes([17]), [AccountMeta(account, False, True)])


def ata_create_idempotent(payer, owner, mint, program=TOKEN):
    return Instruction(ATA, bytes([1]), [
        AccountMeta(payer, True, True), AccountMeta(get_associated_token_address(owner, mint, program), False, True),
        AccountMeta(owner, False, False), AccountMeta(mint, False, False),
        AccountMeta(SYSTEM, False, False), AccountMeta(program, False, False)])


def cu_limit(units):
    return Instruction(COMPUTE_BUDGET, bytes([2]) + struct.pack("<I", units), [])


def cu_price(micro_lamports):
    return Instruction(COMPUTE_BUDGET, bytes([3]) + struct.pack("<Q", micro_lamports), [])


def memo(text, signer):
    return Instruction(MEMO, text.encode(), [AccountMeta(signer, True, False)])


def unknown_program_call(program, account):
    return Instruction(program, b"\x01", [AccountMeta(account, True, True)])


def encode(message) -> str:
    """What a caller posts: the transaction with zero signatures, base64."""
    tx = VersionedTransaction.populate(message, [Signature.default()] * message.header.num_required_signatures)
    return base64.b64encode(bytes(tx)).decode()


class World:
    """Accounts of a wallet, a counterparty and their token accounts, in a LiteSVM simulator."""

    def __init__(self):
        self.simulator = LiteSvmSimulator()
        self.blockhash = Hash.new_unique()
        self.wallet_keypair, self.other_keypair = Keypair(), Keypair()
        self.wallet = self.wallet_keypair.pubkey()
        self.other = self.other_keypair.pubkey()
        self.fund(self.wallet, 10 * SOL)
        self.fund(self.other, 1 * SOL)
        self.mint = self.new_mint()
        self.mint22 = self.new_mint(program=TOKEN_2022)
        self.wallet_ata = self.token_account(self.wallet, self.mint, 1_000_000)
        self.other_ata = self.token_account(self.other, self.mint, 0)
        self.wallet_ata22 = self.token_account(self.wallet, self.mint22, 500, program=TOKEN_2022)
        self.other_ata22 = self.token_account(self.other, self.mint22, 0, program=TOKEN_2022)

    def vm(self):
        return self.simulator.vm()

    def put(self, key, account):
        self.simulator.set_account(key, account)

    def fund(self, key, lamports):
        self.put(key, Account(lamports=lamports, data=b"", owner=SYSTEM))

    def new_mint(self, program=TOKEN, decimals=6, key=None):
        key = key or Pubkey.new_unique()
        data = bytes(Mint(mint_authority=self.other, supply=10**15, decimals=decimals, is_initialized=True))
        self.put(key, Account(lamports=self.vm().minimum_balance_for_rent_exemption(len(data)), data=data, owner=program))
        return key

    def token_account(self, owner, mint, amount, program=TOKEN, address=None, native_rent=None, delegate=None, delegated=0):
        address = address or get_associated_token_address(owner, mint, program)
        data = bytes(TokenAccount(mint=mint, owner=owner, amount=amount, delegate=delegate,
                                  state=TokenAccountState.Initialized, is_native=native_rent,
                                  delegated_amount=delegated, close_authority=None))
        lamports = TOKEN_RENT + (amount if native_rent is not None else 0)
        self.put(address, Account(lamports=lamports, data=data, owner=program))
        return address

    def lookup_table(self, addresses, *, last_extended_slot=0, start_index=0, deactivation_slot=constants.U64_MAX, key=None):
        key = key or Pubkey.new_unique()
        meta = struct.pack("<IQQB", 1, deactivation_slot, last_extended_slot, start_index) + b"\x01" + bytes(self.other) + b"\x00\x00"
        data = meta + b"".join(bytes(a) for a in addresses)
        self.put(key, Account(lamports=self.vm().minimum_balance_for_rent_exemption(len(data)), data=data, owner=ALT))
        return key

    def legacy(self, instructions, payer=None) -> str:
        return encode(Message.new_with_blockhash(instructions, payer or self.wallet, self.blockhash))

    def v0(self, instructions, tables: dict, payer=None) -> str:
        """tables: {table key: [addresses the message is compiled against]}."""
        accounts = [AddressLookupTableAccount(key, list(addrs)) for key, addrs in tables.items()]
        return encode(MessageV0.try_compile(payer or self.wallet, instructions, accounts, self.blockhash))

    def policy(self, **extra) -> dict:
        base = {"wallet": str(self.wallet), "max_sol_out": 0.01, "max_token_out": {str(self.mint): 400_000, str(self.mint22): 100}}
        base.update(extra)
        return base
