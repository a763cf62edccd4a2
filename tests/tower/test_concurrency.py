"""Hundreds of actions from parallel clients of several agents, through a real server on PostgreSQL:
the chain has no gap and no duplicate, every link and signature holds, and stock is exact."""

from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from django.db import connection

from tests.tower.helpers import small_order
from tower import services
from tower.models import Action, LegacyOrder, LegacyProduct, Receipt

pytestmark = pytest.mark.django_db(transaction=True)

AGENTS = 4
ACTIONS = 240
THREADS = 24


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks need PostgreSQL")
def test_parallel_actions_of_several_agents_give_a_gapless_verified_chain(alice, live_server):
    services.template_load(org=alice.org)
    keys = [services.agent_create(org=alice.org, name=f"bot{n}", scopes=["*"]).raw for n in range(AGENTS)]
    LegacyProduct.objects.filter(sku="DRILL-18V").update(stock=10)

    def one(n: int):
        # A mix: small orders (executed), large ones (held), unknown customers (refused), and drills
        # that race for the last 10 in stock (each asks for 1, so exactly 10 can win).
        kind = n % 4
        order = {0: small_order(quantity=1), 1: small_order(quantity=4000), 2: small_order(customer="C-9999"),
                 3: small_order(sku="DRILL-18V", quantity=1)}[kind]
        with requests.Session() as session:
            response = session.post(f"{live_server.url}/api/v1/tower/actions",
                                    json={"operation": "create_sales_order", "input": order, "idempotency_key": f"n{n}"},
                                    headers={"Authorization": f"Bearer {keys[n % AGENTS]}"}, timeout=120)
        return kind, response.status_code

    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(one, range(ACTIONS)))

    statuses = {}
    for kind, status in results:
        statuses.setdefault(kind, []).append(status)
    assert set(statuses[0]) == {200} and set(statuses[1]) == {202} and set(statuses[2]) == {422}
    assert statuses[3].count(200) == 10 and statuses[3].count(422) == ACTIONS // 4 - 10  # policy or ERP refused the rest
    assert LegacyProduct.objects.get(sku="DRILL-18V").stock == 0

    sequences = list(Receipt.objects.filter(org=alice.org).order_by("sequence").values_list("sequence", flat=True))
    assert sequences == list(range(1, len(sequences) + 1))
    assert len(sequences) == 2 * ACTIONS - ACTIONS // 4  # held actions have a decision receipt only
    assert Action.objects.count() == ACTIONS
    assert LegacyOrder.objects.count() == ACTIONS // 4 + 10

    report = services.receipts_verify(org=alice.org)
    assert report == {**report, "ok": True, "checked": len(sequences), "first_break": None, "latest_sequence": len(sequences)}
