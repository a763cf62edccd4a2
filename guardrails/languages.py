"""GET /api/v1/languages: figures produced by `manage.py guardrails_languages` on the held-out split.

The command writes guardrails/models/languages.json; nothing here is typed by hand."""

import json
from functools import lru_cache
from pathlib import Path

from guardrails.engine.language import NAMES

PATH = Path(__file__).resolve().parent / "models" / "languages.json"


@lru_cache(maxsize=1)
def _stored() -> dict:
    if not PATH.exists():
        return {"tested": {}, "test": {"corpus": "not yet run: manage.py guardrails_languages"}}
    return json.loads(PATH.read_text())


def languages_report() -> dict:
    stored = _stored()
    tested = []
    for code, (name, native) in NAMES.items():
        figures = stored["tested"].get(code)
        if figures:
            tested.append({"code": code, "name": name, "native_name": native, "checks": figures["checks"],
                           "matched_expected": figures["matched_expected"]})
    return {"input_languages": "any", "response_language": "en", "tested": tested, "test": stored["test"]}
