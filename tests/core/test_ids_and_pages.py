from datetime import timedelta

import pytest

from accounts.models import AuditEvent
from core import clock
from core.errors import BadRequest
from core.ids import id_pattern, is_valid_id, new_id
from core.pagination import cursor_decode, page_newest_first


def test_ids_carry_their_prefix_and_16_url_safe_characters():
    ids = {new_id("eval_") for _ in range(2000)}
    assert len(ids) == 2000
    assert all(id_pattern("eval_").match(value) for value in ids)
    assert is_valid_id("areg_" + "a" * 16, "areg_")
    assert not is_valid_id("areg_" + "a" * 15, "areg_")
    assert not is_valid_id("eval_" + "a" * 15 + "!", "eval_")
    assert not is_valid_id("bcn_" + "a" * 16, "eval_")


@pytest.mark.django_db
def test_cursor_pages_walk_newest_first_without_gaps_or_repeats_even_on_equal_times(alice):
    same = clock.now()
    for i in range(7):
        AuditEvent.objects.create(org=alice.org, action=f"test.{i}", created_at=same if i < 4 else same + timedelta(seconds=i))
    seen, cursor = [], None
    while True:
        rows, cursor = page_newest_first(AuditEvent.objects.filter(org=alice.org, action__startswith="test."), limit=3, cursor=cursor)
        seen.extend(row.action for row in rows)
        if cursor is None:
            break
    assert sorted(seen) == sorted(f"test.{i}" for i in range(7))
    assert seen[:3] == ["test.6", "test.5", "test.4"]


@pytest.mark.parametrize("cursor", ["!!!", "bm90IGpzb24", "WzFd"])
def test_a_cursor_we_did_not_issue_is_a_400(cursor):
    with pytest.raises(BadRequest):
        cursor_decode(cursor)
