"""The held-out split stays held out: no row, translation or duplicate text of it reaches training."""

import collections
import unicodedata

from guardrails import splits


def normalised(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def test_training_never_reads_a_heldout_group_or_text():
    heldout = splits.rows("heldout")
    training = splits.training_rows()
    assert not {splits.group_of(r) for r in heldout} & {splits.group_of(r) for r in training}
    assert not {normalised(r["text"]) for r in heldout} & {normalised(r["text"]) for r in training}


def test_the_split_is_sixty_twenty_twenty():
    counts = collections.Counter(splits.split_of(r) for r in splits.rows())
    total = sum(counts.values())
    assert abs(counts["train"] / total - 0.6) < 0.03
    assert abs(counts["calibration"] / total - 0.2) < 0.03
    assert abs(counts["heldout"] / total - 0.2) < 0.03


def test_handwritten_rows_cover_every_language_in_the_corpus_schema():
    corpus_ids = {r["id"] for r in splits.rows()}
    for path in [*splits.HANDWRITTEN, *splits.HANDWRITTEN_TESTS]:
        rows = splits.read(path)
        assert rows and all(r["source"].endswith(f"(guardrails/data/{path.name})") for r in rows)
        assert set(collections.Counter(r["lang"] for r in rows)) == set(splits.LANGUAGES)
        for row in rows:
            assert row["id"] not in corpus_ids
            assert set(row["expect"]) == {"prompt_injection", "pii", "secret", "toxic"}
            assert (row["action"] == "block") == (row["expect"]["prompt_injection"] or row["expect"]["toxic"])


def test_the_handwritten_test_sets_are_never_trained_on():
    trained = {normalised(r["text"]) for r in splits.training_rows()}
    for path in splits.HANDWRITTEN_TESTS:
        assert not trained & {normalised(r["text"]) for r in splits.read(path)}, path.name


def test_a_handwritten_slot_is_one_fold_in_every_language():
    # atk-en-07 and atk-ja-07 are variants of one attack: neither may train the heads that score the other.
    by_slot = collections.defaultdict(set)
    for row in splits.training_rows():
        if row["id"].startswith(("atk-", "cmp-", "tox-", "la-")):
            prefix, _, number = row["id"].split("-")
            by_slot[(prefix, number)].add(splits.fold_of(row))
    assert by_slot and all(len(folds) == 1 for folds in by_slot.values())
