import pytest

from tests.preflight.chain import World


@pytest.fixture
def world():
    return World()


@pytest.fixture
def check(world, db):
    """Run one check through the service on the world's LiteSVM: check(tx, **policy overrides)."""
    from preflight import services
    from preflight.serializers import PolicyIn

    def run(transaction, **policy):
        data = {name: value for name, value in world.policy(**policy).items() if value is not None}
        serializer = PolicyIn(data=data)
        serializer.is_valid(raise_exception=True)
        return services.check_create(transaction=transaction, policy=serializer.validated_data, simulator=world.simulator)

    return run


def codes(verdict) -> list[str]:
    return [reason["code"] for reason in verdict.reasons]
