"""Any bytes posted as `transaction` give a 400 or a verdict, never a 500."""

import base64
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import BadRequest
from preflight import services
from preflight.checking import Policy
from preflight.decoding import decode_transaction
from tests.preflight.chain import TOKEN, World, ata_create_idempotent, sol_transfer, token_transfer

FUZZ = settings(max_examples=400, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))


@FUZZ
@given(st.binary(max_size=1400))
def test_random_bytes_decode_or_are_a_clear_400(raw):
    try:
        decode_transaction(base64.b64encode(raw).decode())
    except BadRequest as exc:
        assert exc.message.startswith("transaction: ") and exc.message.endswith(".")


@FUZZ
@given(st.text(max_size=2000))
def test_random_text_decodes_or_is_a_clear_400(text):
    try:
        decode_transaction(text)
    except BadRequest as exc:
        assert exc.message.startswith("transaction: ")


@pytest.mark.django_db
def test_mutated_real_transactions_give_a_400_or_a_verdict():
    world = World()
    policy = Policy(wallet=world.wallet, max_sol_out_lamports=10**9, max_token_out={str(world.mint): 10})
    table = world.lookup_table([world.other_ata, world.mint, world.other])
    seeds = [
        world.legacy([sol_transfer(world.wallet, world.other, 5)]),
        world.legacy([token_transfer(TOKEN, world.wallet_ata, world.other_ata, world.wallet, 5), ata_create_idempotent(world.wallet, world.other, world.mint)]),
        world.v0([token_transfer(TOKEN, world.wallet_ata, world.other_ata, world.wallet, 5)], {table: [world.other_ata, world.mint, world.other]}),
    ]
    rng = random.Random(7)
    verdicts = errors = 0
    for _ in range(600):
        raw = bytearray(base64.b64decode(rng.choice(seeds)))
        for _flip in range(rng.randint(1, 4)):
            position = rng.randrange(len(raw))
            raw[position] = rng.randrange(256)
        if rng.random() < 0.2:
            raw = raw[: rng.randrange(len(raw))]
        try:
            services.check_create(transaction=base64.b64encode(bytes(raw)).decode(), policy=policy, simulator=world.simulator)
            verdicts += 1
        except BadRequest:
            errors += 1
    assert verdicts > 50 and errors > 50  # both paths were exercised
