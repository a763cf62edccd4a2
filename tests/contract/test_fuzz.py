"""Bounded fuzzing of every operation in the served schema with schemathesis: no 500, every error the envelope.

Schemathesis reads /api/v1/openapi.json from the WSGI app and generates requests per operation,
both valid (positive) and invalid (negative: wrong types, missing fields, unknown keys, bodies
that are not JSON). Each case is sent in-process through the WSGI app, as a server would, with a
real key. The run is bounded (FUZZ_EXAMPLES per operation) and derandomized, so it is a normal,
reproducible part of the suite; a failure prints the case and a curl command to replay it.
"""

import contextlib

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from schemathesis import GenerationMode

from tests.conftest import make_tenant
from tests.contract import registry
from tests.contract.schema import check_error_body, check_status, operation_ids, operations

FUZZ_EXAMPLES = 30
FUZZ_SETTINGS = hypothesis_settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    derandomize=True,  # the same cases on every run: a failure reproduces
    database=None,  # nothing written to .hypothesis/
    suppress_health_check=list(HealthCheck),
)

# The app writes outside any test transaction, in autocommit, as it does behind a server: a database
# error in one request cannot poison the next (it would under the `db` fixture's one transaction).
pytestmark = pytest.mark.django_db(transaction=True)


@contextlib.contextmanager
def _connection_outlives_requests():
    """Django closes its connection at the end of each request; the test database's must outlive it.

    django.test.Client does the same around each of its requests.
    """
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


@pytest.fixture(scope="module")
def served_schema():
    with _connection_outlives_requests():
        return schemathesis.openapi.from_wsgi("/api/v1/openapi.json", get_wsgi_application())


@pytest.fixture
def wsgi_keeps_the_test_connection():
    with _connection_outlives_requests():
        yield


def _checks(op):
    def no_server_error(ctx, response, case):
        check_status(response.status_code, response.content, op)

    def errors_are_the_envelope(ctx, response, case):
        if response.status_code >= 400:
            content_type = (response.headers.get("content-type") or [""])[0]
            check_error_body(response.status_code, content_type, response.content, op)

    return [no_server_error, errors_are_the_envelope]


@pytest.mark.parametrize("op", operations(), ids=operation_ids)
def test_fuzzing_finds_no_server_error_and_no_bare_error(op, served_schema, wsgi_keeps_the_test_connection, settings):
    # Signup is throttled per address, and every case comes from one address: lift the limit so the
    # fuzzer keeps reaching the handler instead of the throttle.
    settings.SIGNUP_RATE = "1000000/h"
    operation = served_schema[op.path][op.method.upper()]
    checks = _checks(op)
    cases = st.one_of(operation.as_strategy(GenerationMode.POSITIVE), operation.as_strategy(GenerationMode.NEGATIVE))

    @FUZZ_SETTINGS
    @given(case=cases, real_object=st.booleans())
    def fuzz(case, real_object):
        # Every case gets a fresh organization and key: cases do not depend on each other (hypothesis
        # needs that to shrink), the active-key limit is never the only answer, and DELETE /api/v1/org,
        # which deletes the organization it is called for, takes nothing from the next case.
        tenant = make_tenant("fuzz")
        if real_object and op.path_params:
            # Half the time, address an object that exists (the tenant's own), not a random id.
            case.path_parameters = {**(case.path_parameters or {}), **registry.path_params_for(op.path, tenant)}
        response = case.call(headers={"Authorization": f"Bearer {tenant.key}"})
        case.validate_response(response, checks=checks)

    fuzz()
