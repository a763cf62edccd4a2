"""Preflight's entries for the contract suite (tests/contract/registry.py)."""


def _verdict(tenant) -> dict:
    from preflight import services
    from preflight.checking import Policy
    from tests.preflight.chain import World, sol_transfer

    world = World()
    policy = Policy(wallet=world.wallet, max_sol_out_lamports=10_000_000)
    check = services.check_create(
        transaction=world.legacy([sol_transfer(world.wallet, world.other, 1)]), policy=policy, org=tenant.org, simulator=world.simulator
    )
    return {"check_id": check.id}


OBJECT_FACTORIES = {
    "/api/v1/preflight/checks/{check_id}": _verdict,
    "/api/v1/preflight/checks/{check_id}/reports": _verdict,
}

NOT_TENANT_OWNED = {
    "/api/v1/preflight/checks/{check_id}": "verdicts are public (the record publishes them); the details only go to the organization that asked",
    "/api/v1/preflight/checks/{check_id}/reports": "anyone may report the transaction that landed for a published verdict",
}
