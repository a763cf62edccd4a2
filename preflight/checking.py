"""The check itself: decide what the transaction would do to the wallet, by state diff, and judge it.

Effects come from comparing the watched accounts before and after the simulation, never from
reading instructions: whatever path moves value (a p-token batch, a CPI, an unwrap), the wallet's
lamports and its token accounts show it. Watched: the wallet and every account the transaction can
write to (static writable keys and writable keys loaded from lookup tables).

Decisions on the open cases (documented in the overview and llms.txt):
- Wrapped SOL in a native token account of the wallet is the wallet's SOL: the SOL position is the
  wallet's lamports plus the amounts of its native (wSOL) token accounts, so wrapping or unwrapping
  to oneself moves nothing, and wSOL leaving counts against max_sol_out, not max_token_out.
- A close authority handed to another party on a token account of the wallet is a spending
  approval (`delegate_approved`, allowed with allow_delegation): on a wSOL account it can take the
  whole balance, on any other it can take the rent and close the account once it is empty.
- A durable-nonce transaction (instruction 0 advances a nonce) never expires: it is judged as usual,
  and the verdict says so (`effects.durable_nonce`); it is covered only if it lands within the window.
"""

from dataclasses import dataclass, field

from django.conf import settings
from solders.account import Account
from solders.pubkey import Pubkey

from preflight import constants
from preflight.decoding import Decoded, LookupTableUnreadable, ResolvedKeys, resolve_keys
from preflight.simulators import Simulator
from preflight.state import exists, token_state

NATIVE_MINT = "So11111111111111111111111111111111111111112"


@dataclass(frozen=True)
class Policy:
    wallet: Pubkey
    max_sol_out_lamports: int
    max_token_out: dict[str, int] = field(default_factory=dict)
    min_token_in: dict[str, int] = field(default_factory=dict)
    allowed_programs: frozenset[str] | None = None
    allow_delegation: bool = False

    def as_json(self) -> dict:
        return {
            "wallet": str(self.wallet),
            "max_sol_out_lamports": str(self.max_sol_out_lamports),
            "max_token_out": {mint: str(v) for mint, v in sorted(self.max_token_out.items())},
            "min_token_in": {mint: str(v) for mint, v in sorted(self.min_token_in.items())},
            "allowed_programs": sorted(self.allowed_programs) if self.allowed_programs is not None else None,
            "allow_delegation": self.allow_delegation,
        }

    @classmethod
    def from_json(cls, data: dict) -> "Policy":
        allowed = data.get("allowed_programs")
        return cls(
            wallet=Pubkey.from_string(data["wallet"]),
            max_sol_out_lamports=int(data["max_sol_out_lamports"]),
            max_token_out={m: int(v) for m, v in (data.get("max_token_out") or {}).items()},
            min_token_in={m: int(v) for m, v in (data.get("min_token_in") or {}).items()},
            allowed_programs=frozenset(allowed) if allowed is not None else None,
            allow_delegation=bool(data.get("allow_delegation")),
        )


@dataclass
class Outcome:
    reasons: list[dict] = field(default_factory=list)
    effects: dict = field(default_factory=dict)
    programs: list[str] = field(default_factory=list)
    simulated: bool = False
    simulator: str = ""
    keys: list[str] = field(default_factory=list)  # the full key list, once lookups are resolved

    @property
    def decision(self) -> str:
        return "refuse" if self.reasons else "allow"

    @property
    def covered(self) -> bool:
        """Every program run is on the guarantee's list (and the simulation completed)."""
        return self.simulated and bool(self.programs) and all(p in constants.COVERED_PROGRAMS for p in self.programs)

    def refuse(self, code: str, detail: str) -> None:
        assert code in constants.REASON_CODES, code
        self.reasons.append({"code": code, "detail": detail})


def _programs(keys, indexes) -> list[str]:
    return list(dict.fromkeys(str(keys[i]) for i in indexes if i < len(keys)))


def run_check(decoded: Decoded, policy: Policy, simulator: Simulator) -> Outcome:
    """Judge one decoded transaction against a policy. NodeUnavailable propagates (no verdict)."""
    out = Outcome(simulator=simulator.name)
    wallet = policy.wallet
    nonce = decoded.durable_nonce_account()
    out.effects = empty_effects(durable_nonce=str(nonce) if nonce else None)
    out.programs = _programs(decoded.static_keys, decoded.top_level_program_indexes())
    out.keys = [str(k) for k in decoded.static_keys]

    # Decided from the message alone, before reading or simulating anything.
    if wallet not in decoded.signers:
        out.refuse("wallet_not_a_signer", f"{wallet} is not among the transaction's {decoded.num_signers} signer(s).")
    for position, index in decoded.unresolved_programs():
        out.refuse(
            "program_unresolved",
            f"instruction {position} names program account {index}, but the transaction has "
            f"{len(decoded.static_keys)} static accounts (a program cannot come from a lookup table).",
        )
    if out.reasons:
        return out

    resolved = _resolve(decoded, simulator, out)
    if resolved is None:
        return out
    out.keys = [str(k) for k in resolved.keys]
    watch = list(dict.fromkeys([wallet, *resolved.writable_keys()]))
    cap = settings.PREFLIGHT_MAX_ACCOUNTS
    if len(watch) > cap:
        out.refuse("too_many_accounts", f"the transaction can write to {len(watch)} accounts (with the wallet); one check reads at most {cap}.")
        return out

    sim = simulator.simulate(decoded, resolved, watch)
    out.effects["units_consumed"] = sim.units_consumed
    out.effects["sol"]["fee_lamports"] = str(sim.fee) if sim.fee is not None else None
    inner = [str(p) for p in sim.inner_programs]
    out.programs = list(dict.fromkeys([*out.programs, *inner]))
    if sim.err is not None:
        last = next((line for line in reversed(sim.logs) if "failed" in line or "Error" in line), "")
        out.refuse("simulation_failed", f"{sim.err}" + (f" ({last[:200]})" if last else ""))
        return out
    if sim.missing:
        out.refuse("simulation_incomplete", f"the simulator did not return {len(sim.missing)} of the {len(watch)} accounts the check reads.")
        return out
    out.simulated = True
    _judge(out, policy, watch, sim.pre, sim.post)
    return out


def _resolve(decoded: Decoded, simulator: Simulator, out: Outcome) -> ResolvedKeys | None:
    if not decoded.lookups:
        return resolve_keys(decoded, {}, slot=0)
    tables, slot = simulator.accounts([lk.table for lk in decoded.lookups])
    try:
        return resolve_keys(decoded, tables, slot=slot)
    except LookupTableUnreadable as exc:
        out.refuse("lookup_table_unreadable", str(exc))
        return None


def empty_effects(*, durable_nonce: str | None = None) -> dict:
    return {
        "sol": {"out_lamports": "0", "in_lamports": "0", "fee_lamports": None},
        "tokens": [],
        "delegations": [],
        "close_authorities": [],
        "owner_changes": [],
        "wallet_owner": None,
        "durable_nonce": durable_nonce,
        "units_consumed": None,
    }


def _lamports(account: Account | None) -> int:
    return account.lamports if exists(account) else 0


def _judge(out: Outcome, policy: Policy, watch: list[Pubkey], pre: dict, post: dict) -> None:
    wallet = policy.wallet
    effects = out.effects
    sol_before = _lamports(pre.get(wallet))
    sol_after = _lamports(post.get(wallet))
    before_wallet, after_wallet = pre.get(wallet), post.get(wallet)
    if exists(before_wallet) and exists(after_wallet) and before_wallet.owner != after_wallet.owner:
        effects["wallet_owner"] = {"before": str(before_wallet.owner), "after": str(after_wallet.owner)}
        out.refuse("wallet_reassigned", f"the wallet's owner would change from {before_wallet.owner} to {after_wallet.owner}.")

    token_out: dict[str, int] = {}
    token_in: dict[str, int] = {}
    programs_of: dict[str, str] = {}
    for key in watch:
        if key == wallet:
            continue
        a = token_state(pre.get(key)) if exists(pre.get(key)) else None
        b = token_state(post.get(key)) if exists(post.get(key)) else None
        was_mine = a is not None and a.owner == wallet
        is_mine = b is not None and b.owner == wallet
        if not (was_mine or is_mine):
            continue
        state = a or b
        mint = str(state.mint)
        amount_before = a.amount if was_mine else 0
        amount_after = b.amount if is_mine else 0  # handed over or closed: all of it left
        if state.is_native or (b is not None and b.is_native):
            sol_before += amount_before  # wrapped SOL is the wallet's SOL
            sol_after += amount_after
        else:
            programs_of[mint] = str(state.program)
            if amount_after < amount_before:
                token_out[mint] = token_out.get(mint, 0) + amount_before - amount_after
            elif amount_after > amount_before:
                token_in[mint] = token_in.get(mint, 0) + amount_after - amount_before
        if was_mine and b is not None and b.owner != wallet:
            effects["owner_changes"].append({"account": str(key), "mint": mint, "owner": str(b.owner)})
            out.refuse("token_account_owner_changed", f"token account {key} ({mint}) would be handed to {b.owner}.")
        if b is not None and (was_mine or is_mine):
            _authorities(out, policy, key, mint, a if was_mine else None, b)

    sol_out = max(sol_before - sol_after, 0)
    sol_in = max(sol_after - sol_before, 0)
    effects["sol"].update(out_lamports=str(sol_out), in_lamports=str(sol_in))
    effects["tokens"] = [
        {"mint": mint, "program": programs_of[mint], "out": str(token_out.get(mint, 0)), "in": str(token_in.get(mint, 0))}
        for mint in sorted(set(token_out) | set(token_in))
    ]
    if sol_out > policy.max_sol_out_lamports:
        out.refuse("sol_out_exceeds_limit", f"{sol_out} lamports would leave the wallet (fees included); the policy allows {policy.max_sol_out_lamports}.")
    for mint, amount in sorted(token_out.items()):
        limit = policy.max_token_out.get(mint, 0)
        if amount > limit:
            listed = "" if mint in policy.max_token_out else " (not listed in max_token_out, so none may leave)"
            out.refuse("token_out_exceeds_limit", f"{amount} of {mint} would leave; the policy allows {limit}{listed}.")
    for mint, need in sorted(policy.min_token_in.items()):
        got = sol_in if mint == NATIVE_MINT else token_in.get(mint, 0)
        if got < need:
            out.refuse("token_in_below_minimum", f"{got} of {mint} would arrive; the policy requires at least {need}.")
    if policy.allowed_programs is not None:
        unlisted = [p for p in out.programs if p not in policy.allowed_programs]
        if unlisted:
            out.refuse("program_not_allowed", f"not in allowed_programs: {', '.join(unlisted)}.")


def _authorities(out: Outcome, policy: Policy, key: Pubkey, mint: str, a, b) -> None:
    wallet = policy.wallet
    if b.delegate is not None and (a is None or a.delegate != b.delegate or b.delegated_amount > a.delegated_amount):
        out.effects["delegations"].append(
            {"account": str(key), "mint": mint, "delegate": str(b.delegate), "amount": str(b.delegated_amount)}
        )
        if not policy.allow_delegation:
            out.refuse("delegate_approved", f"{b.delegate} would be approved to spend {b.delegated_amount} of {mint} from token account {key}.")
    if b.close_authority is not None and b.close_authority != wallet and (a is None or a.close_authority != b.close_authority):
        out.effects["close_authorities"].append({"account": str(key), "mint": mint, "close_authority": str(b.close_authority)})
        if not policy.allow_delegation:
            out.refuse(
                "delegate_approved",
                f"{b.close_authority} would become the close authority of token account {key} ({mint}), able to close it"
                + (" and take its wrapped SOL." if b.is_native else " and take its rent once it is empty."),
            )
