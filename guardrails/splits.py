"""The corpus split: train (60 %), calibration (20 %), heldout (20 %), by a stable hash of each row's group.

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
    return f"row:{row['id']}"


def split_of(row: dict) -> str:
    bucket = int(hashlib.sha256(group_of(row).encode()).hexdigest(), 16) % 10
    return "train" if bucket < 6 else "calibration" if bucket < 8 else "heldout"


def rows(split: str | None = None) -> list[dict]:
    with CORPUS.open(encoding="utf-8") as handle:
        out = [json.loads(line) for line in handle if line.strip()]
    return [r for r in out if split is None or split_of(r) == split]
