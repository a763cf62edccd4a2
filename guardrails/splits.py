"""The corpus split: train (60 %), calibration (20 %), heldout (20 %), by a stable hash of each row's group.

Training uses train and calibration together, cross-fitted in FOLDS folds (guardrails/train.py); the
heldout split is read only by the reports.

A group keeps every translation of one prompt together (RTP-LX `Index`, PurpleLlama's English original),
so no split sees a translation of a row another split holds."""

import hashlib
import json
import re
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "data" / "corpus.jsonl"
LANGUAGES = ["en", "de", "fr", "es", "pt", "it", "nl", "pl", "ru", "ja", "zh", "ar", "hi", "tr"]


def group_of(row: dict) -> str:
    source = row["source"]
    m = re.search(r"RTP-LX.*#Index=(\d+)", source)
    if m:
        return f"rtp:{m.group(1)}"
    m = re.search(r"prompt_injection_multilingual_machine_translated\.json#(\d+)", source)
    if m:
        i = int(m.group(1))
        return f"pl:{i // 3 if i < 753 else i - 753}"
    m = re.search(r"prompt_injection\.json#(\d+)", source)
    if m:
        return f"pl:{m.group(1)}"
    m = re.fullmatch(r"(atk|cmp|tox|la)-[a-z]+-(\d+)", row["id"])
    if m:  # our handwritten rows: slot NN holds one text in every language, often a close variant
        return f"{m.group(1)}:{m.group(2)}"
    return f"row:{row['id']}"


def split_of(row: dict) -> str:
    bucket = int(hashlib.sha256(group_of(row).encode()).hexdigest(), 16) % 10
    return "train" if bucket < 6 else "calibration" if bucket < 8 else "heldout"


def read(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def rows(split: str | None = None) -> list[dict]:
    return [r for r in read(CORPUS) if split is None or split_of(r) == split]


FOLDS = 5


def fold_of(row: dict) -> int:
    """The cross-fitting fold of a train or calibration row (by prompt group, like the split)."""
    return int(hashlib.sha256(f"fold:{group_of(row)}".encode()).hexdigest(), 16) % FOLDS


def is_lookalike(row: dict) -> bool:
    """A benign text built to look like an attack or abuse: hard negatives, trigger words, mention-not-use."""
    return bool({"hard_negative", "trigger_words", "mention_not_use"} & set(row["tags"])) and not (
        row["expect"]["prompt_injection"] or row["expect"]["toxic"])


# Rows we wrote by hand. Training reads the first four files; the test files are second test sets that no
# training or threshold sees (reported by guardrails_calibrate), written without sight of the training files
# except toxic-test.jsonl, whose writers read toxic.jsonl and lookalikes.jsonl so as not to repeat them.
HANDWRITTEN = [CORPUS.parent / name for name in ("lookalikes.jsonl", "attacks.jsonl", "complaints.jsonl", "toxic.jsonl")]
HANDWRITTEN_TESTS = [CORPUS.parent / name for name in (
    "abuse.jsonl", "injection-test.jsonl", "toxicity-lookalikes-test.jsonl", "toxic-test.jsonl")]


def training_rows() -> list[dict]:
    """What training reads: the train and calibration splits, plus the handwritten training rows."""
    return rows("train") + rows("calibration") + [row for path in HANDWRITTEN for row in read(path)]
