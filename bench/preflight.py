"""Preflight check latency and throughput on the LiteSVM backend, in-process.

    python bench/preflight.py [-n 2000] [--warmup 100]

Three transaction shapes: a simple SOL transfer; a multi-instruction token transaction (compute
budget limit and price, ATA create-idempotent with its inner System and Token calls, an SPL Token
transfer, a Token-2022 transferChecked); a v0 token transfer through an address lookup table.
Two layers per shape: `engine` is decode + LiteSVM simulation + state-diff judgement
(preflight.checking.run_check); `service` is preflight.services.check_create, which adds the
Ed25519-signed receipt and the database row (scratch SQLite under a temporary VAR_DIR, or the
a scratch `<name>_bench` PostgreSQL database next to DATABASE_URL, dropped after). One thread, requests one after another; p50/p95/p99 in ms and
checks per second.
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


def setup_django():
    """Django on a scratch database: `<name>_bench` next to DATABASE_URL (bench/run.py's helper), else SQLite."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["VAR_DIR"] = tempfile.mkdtemp(prefix="bench_preflight_")
    drop = None
    if os.environ.get("DATABASE_URL"):
        from bench.run import _scratch_database

        os.environ["DATABASE_URL"], drop = _scratch_database(os.environ["DATABASE_URL"])
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    return drop


def shapes(world):
    from solders.keypair import Keypair

    from tests.preflight.chain import (
        TOKEN,
        TOKEN_2022,
        ata_create_idempotent,
        cu_limit,
        cu_price,
        sol_transfer,
        token_transfer,
        token_transfer_checked,
    )

    table = world.lookup_table([world.other_ata, world.mint, world.other])
    return {
        "sol transfer": world.legacy([sol_transfer(world.wallet, world.other, 1_000_000)]),
        "multi-ix token tx": world.legacy([
            cu_limit(400_000), cu_price(10_000),
            ata_create_idempotent(world.wallet, Keypair().pubkey(), world.mint),
            token_transfer(TOKEN, world.wallet_ata, world.other_ata, world.wallet, 1_000),
            token_transfer_checked(TOKEN_2022, world.wallet_ata22, world.mint22, world.other_ata22, world.wallet, 10),
        ]),
        "v0 + lookup table": world.v0(
            [token_transfer_checked(TOKEN, world.wallet_ata, world.mint, world.other_ata, world.wallet, 1_000)],
            {table: [world.other_ata, world.mint, world.other]},
        ),
    }


def measure(fn, n: int, warmup: int) -> list[float]:
    for _ in range(warmup):
        fn()
    timings = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def row(name: str, layer: str, timings: list[float]) -> str:
    ordered = sorted(timings)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    rate = 1000 / statistics.mean(timings)
    return f"{name:<20} {layer:<8} {pick(0.50):8.3f} {pick(0.95):8.3f} {pick(0.99):8.3f} {rate:10.0f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=100)
    args = parser.parse_args()
    drop = setup_django()
    try:
        run(args)
    finally:
        if drop is not None:
            from django.db import connections

            connections.close_all()
            drop()


def run(args) -> None:
    from preflight import services
    from preflight.checking import Policy, run_check
    from preflight.decoding import decode_transaction
    from tests.preflight.chain import World

    world = World()
    policy = Policy(
        wallet=world.wallet,
        max_sol_out_lamports=10**9,
        max_token_out={str(world.mint): 10**6, str(world.mint22): 10**6},
    )
    from django.db import connection

    print(f"Preflight on LiteSVM, n={args.n} per row (ms), database {connection.vendor}")
    print(f"{'shape':<20} {'layer':<8} {'p50':>8} {'p95':>8} {'p99':>8} {'checks/s':>10}")
    for name, tx in shapes(world).items():
        verdict = run_check(decode_transaction(tx), policy, world.simulator)
        assert verdict.decision == "allow", (name, verdict.reasons)
        engine = measure(lambda tx=tx: run_check(decode_transaction(tx), policy, world.simulator), args.n, args.warmup)
        print(row(name, "engine", engine))
        service = measure(
            lambda tx=tx: services.check_create(transaction=tx, policy=policy, simulator=world.simulator), args.n, args.warmup
        )
        print(row(name, "service", service))


if __name__ == "__main__":
    main()
