import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_the_seed_command_that_make_run_calls_succeeds_twice(capsys):
    call_command("seed")
    call_command("seed")
    assert "signing key ed25519-" in capsys.readouterr().out
