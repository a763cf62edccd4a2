"""Preflight's fixed values: program ids, the guarantee's covered list, reason codes and limits."""

from solders.pubkey import Pubkey

SYSTEM_PROGRAM = "11111111111111111111111111111111"
COMPUTE_BUDGET_PROGRAM = "ComputeBudget111111111111111111111111111111"
TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"
ASSOCIATED_TOKEN_PROGRAM = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL"
SWAP_AGGREGATOR_PROGRAM = "JUP6LkbZbjS1jKKwapdHNy74zcZ3tLUZoi5QNyVTaV4"  # Jupiter Aggregator v6
POOL_PROGRAM = "pAMMBay6oceH9fJKBRHGP5D4bD4sWpmSwMn52FMfXEA"  # PumpSwap (Pump AMM)
POOL_FEE_PROGRAM = "pfeeUxB6jkeY1Hxd7CsFCAjcbHA9rWtchMGdZ6VojVZ"  # Pump Fees, which PumpSwap invokes
LOOKUP_TABLE_PROGRAM = "AddressLookupTab1e1111111111111111111111111"
LIGHTHOUSE_PROGRAM = "L2TExMFKdjpN9kozasaurPirfHy9P8sbXoAN1qA3S95"  # wallet-added assertions
UPGRADEABLE_LOADER = "BPFLoaderUpgradeab1e11111111111111111111111"

# The guarantee covers a transaction only when every program it runs (top-level and inner) is here.
COVERED_PROGRAMS: dict[str, str] = {
    SYSTEM_PROGRAM: "System",
    COMPUTE_BUDGET_PROGRAM: "Compute Budget",
    TOKEN_PROGRAM: "SPL Token",
    TOKEN_2022_PROGRAM: "Token-2022",
    ASSOCIATED_TOKEN_PROGRAM: "Associated Token Account",
    SWAP_AGGREGATOR_PROGRAM: "Jupiter Aggregator v6 (swap aggregator)",
    POOL_PROGRAM: "PumpSwap (pool-swap program)",
    POOL_FEE_PROGRAM: "Pump Fees (the pool program's fee program)",
}

TOKEN_PROGRAMS = frozenset({Pubkey.from_string(TOKEN_PROGRAM), Pubkey.from_string(TOKEN_2022_PROGRAM)})

LAMPORTS_PER_SOL = 1_000_000_000
U64_MAX = 2**64 - 1
FRESHNESS_SECONDS = 120  # a verdict covers a transaction that lands within this many seconds

DECISIONS = ("allow", "refuse")

# Spec 2.6, in the order a check can reach them.
REASON_CODES: dict[str, str] = {
    "wallet_not_a_signer": "policy.wallet does not sign the transaction.",
    "program_unresolved": "An instruction names a program outside the transaction's own accounts.",
    "lookup_table_unreadable": "Accounts are loaded from a lookup table that is missing or too short.",
    "too_many_accounts": "The transaction can write to more accounts than one check reads.",
    "simulation_failed": "The transaction would fail if sent now.",
    "simulation_incomplete": "The node did not return the accounts after the transaction.",
    "sol_out_exceeds_limit": "More SOL would leave the wallet than max_sol_out allows, fees included.",
    "token_out_exceeds_limit": "More of a token would leave than max_token_out allows; an unlisted mint may not leave.",
    "token_in_below_minimum": "Less of a token would arrive than min_token_in requires.",
    "program_not_allowed": "A program run (top-level or inner) is not in allowed_programs.",
    "delegate_approved": "Someone would be approved to spend from a token account of the wallet.",
    "token_account_owner_changed": "A token account of the wallet would be handed to another owner.",
    "wallet_reassigned": "The wallet itself would be assigned to a program.",
}

MAX_TRANSACTION_BYTES = 1232  # the packet limit of a Solana transaction
MAX_TRANSACTION_CHARS = 4 * ((MAX_TRANSACTION_BYTES + 2) // 3) + 64  # base64 of it, with slack for whitespace
MAX_POLICY_ENTRIES = 64  # mints in max_token_out / min_token_in, programs in allowed_programs
