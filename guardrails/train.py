"""Train the injection and toxicity heads from the corpus, and fit their stack, thresholds and the
confidence calibration, cross-fitted so that every figure is fitted on predictions for rows the
classifiers did not train on.

    .venv/bin/python -m guardrails.train

Each head is a logistic regression over the hashed n-gram features and a small neural network (one hidden
layer) over the encoder's embedding of the window the n-gram model finds most suspicious (what the service
embeds at run time).
The `train` and `calibration` splits are cut into FOLDS folds by prompt group; for each fold, heads
trained on the other folds score it (out-of-fold). On those scores are fitted the stack that turns the
two raw scores into a probability, the thresholds (one overall and one per detected language), and then (running the engine with each fold's heads
over that fold) the isotonic map from each action's raw confidence to P(action right). The shipped heads
are trained on all of train and calibration. The `heldout` split is never read here.

Writes guardrails/models/<head>.npz and calibration.json. Embeddings are cached under var/ (about four
minutes the first time on 2 cores). With one cache, the same corpus gives the same files; the encoder's
embeddings differ slightly between machines (ONNX Runtime picks its int8 kernels by CPU), so a cache
rebuilt elsewhere moves the embedding weights a little.
"""

import hashlib
import json
import sys
from collections import Counter

import numpy as np

from guardrails import splits
from guardrails.engine import calibration, encoder, language, normalize, textmodel

# Keyed by the encoder build, so embeddings of another build are never mixed in.
CACHE = encoder.VAR_DIR / f"guardrails-embeddings-{encoder.model_path().stem.rsplit('-', 1)[-1]}.npz"
# Each head's out-of-fold probabilities, for studying thresholds without retraining (not shipped).
OOF_DUMP = CACHE.with_name("guardrails-oof.npz")
# The false-positive rates a threshold may reach out of fold: over all negatives, and over the benign
# look-alikes (hard negatives, trigger words, mention-not-use), whose goal is at most 3 %.
MAX_FPR = 0.04
MAX_LOOKALIKE_FPR = 0.03
MIN_PER_LANGUAGE = 40
EMB_HIDDEN = 64  # units of the embedding head's hidden layer
EMB_SEEDS = 5  # networks averaged (seeds 0 to 4)
EMB_ALPHA = 1e-3  # their L2 penalty

HEADS = {"prompt_injection": lambda r: r["expect"]["prompt_injection"], "toxicity": lambda r: r["expect"]["toxic"]}


def texts_of(row: dict) -> list[str]:
    norm, extra, _signals = normalize.views(row["text"])
    return [norm, *extra]


def matrix(rows: list[dict]):
    indptr, indices, values = [0], [], []
    for row in rows:
        idx, val = textmodel.features(" ".join(texts_of(row)))
        indices.append(idx)
        values.append(val)
        indptr.append(indptr[-1] + idx.size)
    return np.array(indptr), np.concatenate(indices), np.concatenate(values).astype(np.float64)


def sample_weights(rows: list[dict], y: np.ndarray) -> np.ndarray:
    """Both classes weigh the same inside each language (so no language reads as "attack" on its own,
    English being most of the attacks), and the two classes weigh the same overall."""
    groups = Counter((r["lang"], y[i]) for i, r in enumerate(rows))
    langs = Counter(r["lang"] for r in rows)
    w = np.array([0.5 / groups[(r["lang"], y[i])] * langs[r["lang"]] for i, r in enumerate(rows)])
    w /= w.mean()
    pos = (w * y).sum() / w.sum()
    return w * np.where(y == 1, 0.5 / pos, 0.5 / (1 - pos))


def fit_lr(X, y: np.ndarray, sample_w: np.ndarray, *, l2: float = 1e-5, epochs: int = 400, lr: float = 0.05) -> tuple[np.ndarray, float]:
    indptr, indices, values = X
    n = len(y)
    counts = np.diff(indptr)
    w = np.zeros(textmodel.DIM)
    b = 0.0
    m_w = np.zeros_like(w)
    v_w = np.zeros_like(w)
    m_b = v_b = 0.0
    row_of = np.repeat(np.arange(n), counts)
    for t in range(1, epochs + 1):
        z = np.bincount(row_of, weights=w[indices] * values, minlength=n) + b
        p = 1 / (1 + np.exp(-z))
        err = (p - y) * sample_w / n
        g_w = np.bincount(indices, weights=values * err[row_of], minlength=textmodel.DIM) + l2 * w
        g_b = err.sum()
        m_w = 0.9 * m_w + 0.1 * g_w
        v_w = 0.999 * v_w + 0.001 * g_w * g_w
        m_b = 0.9 * m_b + 0.1 * g_b
        v_b = 0.999 * v_b + 0.001 * g_b * g_b
        w -= lr * (m_w / (1 - 0.9**t)) / (np.sqrt(v_w / (1 - 0.999**t)) + 1e-8)
        b -= lr * (m_b / (1 - 0.9**t)) / (np.sqrt(v_b / (1 - 0.999**t)) + 1e-8)
    return w, b


def fit_logistic(X: np.ndarray, y: np.ndarray, sample_w: np.ndarray | None = None, *, l2: float = 0.0, iterations: int = 50) -> np.ndarray:
    """Newton's method for a dense logistic regression; returns [coefficients..., intercept]."""
    A = np.c_[X, np.ones(len(X))]
    sw = np.ones(len(y)) if sample_w is None else sample_w
    beta = np.zeros(A.shape[1])
    reg = np.full(A.shape[1], l2)
    reg[-1] = 0.0
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-np.clip(A @ beta, -30, 30)))
        grad = A.T @ ((p - y) * sw) + reg * beta
        hess = (A * (sw * p * (1 - p))[:, None]).T @ A + np.diag(reg) + 1e-9 * np.eye(A.shape[1])
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-8:
            break
    return beta


_memo: dict[str, np.ndarray] | None = None


def _cache() -> dict[str, np.ndarray]:
    global _memo
    if _memo is None:
        _memo = {}
        if CACHE.exists():
            data = np.load(CACHE)
            _memo = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))
    return _memo


def _save_cache() -> None:
    CACHE.parent.mkdir(exist_ok=True)
    cache = _cache()
    np.savez(CACHE, keys=np.array(list(cache)), vectors=np.stack(list(cache.values())))


def embeddings(texts: list[str]) -> np.ndarray:
    """The encoder's embedding of each text, through a cache keyed by the hash of the clipped text."""
    cache = _cache()
    clipped = [encoder.clip(t) for t in texts]
    keys = [hashlib.sha256(c.encode()).hexdigest()[:32] for c in clipped]
    missing = list({k: c for k, c in zip(keys, clipped, strict=True) if k not in cache}.items())
    for start in range(0, len(missing), 32):
        batch = missing[start:start + 32]
        for (k, _c), v in zip(batch, encoder.embed([c for _k, c in batch]), strict=True):
            cache[k] = v.astype(np.float32)
        if start % 640 == 608:
            print(f"  embedded {start + len(batch)}/{len(missing)}", flush=True)
            _save_cache()
    if missing:
        _save_cache()
    return np.stack([cache[k] for k in keys]) if keys else np.zeros((0, encoder.DIM), np.float32)


def ngram_tops(head: textmodel.Head, rows: list[dict]) -> np.ndarray:
    """Per row, the head's highest n-gram raw score over the row's windows: what the service scores."""
    return np.array([head.top_raw(textmodel.window_features(textmodel.window_texts(texts_of(r), head.name))) for r in rows])


def encoder_windows(rows: list[dict], heads: list[textmodel.Head]) -> list[str]:
    """Per row, the window the service would give the encoder."""
    return [textmodel.encoder_window(texts_of(r), heads) for r in rows]


def choose_threshold(probs: np.ndarray, y: np.ndarray, lookalike: np.ndarray) -> float:
    """The lowest threshold (the highest recall) whose out-of-fold false-positive rates stay within
    MAX_FPR over all negatives and MAX_LOOKALIKE_FPR over the benign look-alikes."""
    best = 0.95
    for threshold in np.linspace(0.95, 0.05, 181):
        _recall, fpr, lookalike_fpr = rates(probs, y, lookalike, threshold)
        if fpr > MAX_FPR or lookalike_fpr > MAX_LOOKALIKE_FPR:
            break
        best = float(threshold)
    return best


def language_thresholds(probs: np.ndarray, y: np.ndarray, lookalike: np.ndarray, detected: np.ndarray) -> dict[str, float]:
    """A threshold per corpus language, chosen like the global one on that language's out-of-fold rows (the
    goals hold in every language, and scores do not run on one scale: Chinese attacks score lower than
    English ones, and so do Chinese look-alikes). A language keeps the global threshold when it has fewer
    than MIN_PER_LANGUAGE positives or look-alikes, or when no threshold keeps its false-positive rates
    within the caps (English injection look-alikes that quote attacks score as high as attacks: raising
    its threshold to the top would cost recall and still miss the cap)."""
    out = {}
    for lang in splits.LANGUAGES:
        m = detected == lang
        if (y[m] == 1).sum() < MIN_PER_LANGUAGE or lookalike[m].sum() < MIN_PER_LANGUAGE:
            continue
        threshold = choose_threshold(probs[m], y[m], lookalike[m])
        _recall, fpr, lookalike_fpr = rates(probs[m], y[m], lookalike[m], threshold)
        if fpr <= MAX_FPR and lookalike_fpr <= MAX_LOOKALIKE_FPR:
            out[lang] = threshold
    return out


def fit_heads(rows: list[dict], X, labels: dict[str, np.ndarray]) -> dict[str, textmodel.Head]:
    """Both regressions of every head on `rows` (stacks and thresholds still to be set). The n-gram
    regressions come first: with them the encoder window of each row is picked as the service picks it."""
    heads, weights = {}, {}
    for name in HEADS:
        sw = sample_weights(rows, labels[name])
        w, b = fit_lr(X, labels[name], sw)
        w = w.astype(np.float16).astype(np.float64)  # as stored, so that training picks the windows the service picks
        heads[name] = textmodel.Head(name, w, b, np.zeros(encoder.DIM), 0.0, (1.0, 1.0, 0.0), 0.5)
        weights[name] = sw / sw.mean()
    E = embeddings(encoder_windows(rows, list(heads.values())))
    for name, head in heads.items():
        fit_embedding_head(head, E, labels[name], weights[name])
    return heads


def fit_embedding_head(head: textmodel.Head, E: np.ndarray, y: np.ndarray, sample_w: np.ndarray) -> None:
    """EMB_SEEDS networks of one hidden ReLU layer of EMB_HIDDEN units over the embedding (scikit-learn's
    MLPClassifier, seeded 0 to EMB_SEEDS - 1), averaged: their mean logit is one network whose hidden layer
    is theirs side by side and whose output weights are theirs divided by EMB_SEEDS, stored as such.
    One network over the last layer's embedding beat a logistic regression out of fold: injection AUC 0.974 ->
    0.980 and recall within the false-positive caps 0.55 -> 0.69; toxicity 0.970 -> 0.974 and 0.67 -> 0.79.
    On the 8th layer's (encoder.LAYERS) it scores AUC 0.989 and 0.983; 256 units with alpha 1e-2 scored
    0.991 and 0.985 but flagged more benign look-alikes on the test sets, so the 64 units stay.
    One network's scores moved with its seed and with the machine the embeddings were computed on ("Act as a
    museum guide and describe the Mona Lisa." scored 0.24 for injection from heads trained on another
    machine's embeddings, 0.74 from the same corpus here, 0.78 with session 8's rows); five averaged score
    it 0.63 and are the ones shipped. Held-out figures moved by about as much between single networks
    trained on the same corpus (action accuracy 0.951 and 0.943) as between one and five."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    hidden_w, hidden_b, out_w, out_b = [], [], [], 0.0
    for seed in range(EMB_SEEDS):
        mlp = MLPClassifier(hidden_layer_sizes=(EMB_HIDDEN,), alpha=EMB_ALPHA, max_iter=300, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            mlp.fit(E, y.astype(int), sample_weight=sample_w)
        hidden_w.append(mlp.coefs_[0])
        hidden_b.append(mlp.intercepts_[0])
        out_w.append(mlp.coefs_[1][:, 0] / EMB_SEEDS)
        out_b += float(mlp.intercepts_[1][0]) / EMB_SEEDS
    head.emb_hidden = (np.hstack(hidden_w).astype(np.float32), np.concatenate(hidden_b).astype(np.float32))
    head.emb_weights, head.emb_bias = np.concatenate(out_w).astype(np.float32), out_b


def rates(probs: np.ndarray, y: np.ndarray, lookalike: np.ndarray, threshold: float) -> tuple[float, float, float]:
    fired = probs >= threshold
    return (float((fired & (y == 1)).sum() / max(1, y.sum())), float((fired & (y == 0)).sum() / max(1, (y == 0).sum())),
            float((fired & lookalike).sum() / max(1, lookalike.sum())))


def main() -> int:
    from guardrails import measure

    rows = splits.training_rows()
    folds = np.array([splits.fold_of(r) for r in rows])
    lookalike = np.array([splits.is_lookalike(r) for r in rows])
    handwritten = np.array(["handwritten" in r["tags"] for r in rows])
    detected = np.array([language.detect(texts_of(r)[0]) for r in rows])  # what the service keys thresholds by
    X = matrix(rows)
    labels = {name: np.array([1.0 if label(r) else 0.0 for r in rows]) for name, label in HEADS.items()}
    textmodel.MODELS.mkdir(exist_ok=True)

    # Out-of-fold raw scores, and each fold's heads.
    fold_heads: list[dict[str, textmodel.Head]] = []
    oof = {name: (np.zeros(len(rows)), np.zeros(len(rows))) for name in HEADS}
    seen: dict[str, np.ndarray] = {}
    for k in range(splits.FOLDS):
        fit_idx, out_idx = np.where(folds != k)[0], np.where(folds == k)[0]
        heads = fit_heads([rows[i] for i in fit_idx], subset(X, fit_idx), {n: y[fit_idx] for n, y in labels.items()})
        out_rows = [rows[i] for i in out_idx]
        windows = encoder_windows(out_rows, list(heads.values()))
        E = embeddings(windows)
        seen.update(zip(windows, E, strict=True))
        for name, head in heads.items():
            oof[name][0][out_idx] = ngram_tops(head, out_rows)
            oof[name][1][out_idx] = head.emb_raws(E)
        fold_heads.append(heads)
        print(f"fold {k + 1}/{splits.FOLDS}: {len(out_idx)} rows scored out of fold", flush=True)

    # The stack and the threshold of each head, on the out-of-fold scores; then the shipped heads.
    final = fit_heads(rows, X, labels)
    for name in HEADS:
        y = labels[name]
        a, b = oof[name]
        stack = tuple(float(x) for x in fit_logistic(np.c_[a, b], y))
        final[name].stack = stack
        probs = np.array([final[name].probability(x, e) for x, e in zip(a, b, strict=True)])
        threshold = choose_threshold(probs, y, lookalike)
        thresholds = language_thresholds(probs, y, lookalike, detected)
        row_threshold = np.array([thresholds.get(lang, threshold) for lang in detected])
        recall, fpr, lookalike_fpr = rates(probs - row_threshold, y, lookalike, 0.0)
        for heads in (*fold_heads, final):
            heads[name].stack, heads[name].threshold, heads[name].thresholds = stack, threshold, thresholds
        head = final[name]
        np.savez_compressed(textmodel.MODELS / f"{name}.npz", weights=head.weights.astype(np.float16), bias=head.bias,
                            emb_weights=head.emb_weights, emb_bias=head.emb_bias, emb_hidden_weights=head.emb_hidden[0],
                            emb_hidden_bias=head.emb_hidden[1], stack=np.array(stack), threshold=threshold,
                            threshold_langs=np.array(list(thresholds)), threshold_values=np.array(list(thresholds.values())))
        print(f"{name}: stack {', '.join(f'{x:.3f}' for x in stack)}, threshold {threshold:.2f} "
              f"({', '.join(f'{lang} {t:.2f}' for lang, t in thresholds.items())}); out of fold: recall {recall:.3f}, "
              f"false-positive rate {fpr:.3f}, {lookalike_fpr:.3f} on look-alikes")
        OOF_DUMP.parent.mkdir(exist_ok=True)
        np.savez(OOF_DUMP.with_name(f"{OOF_DUMP.stem}-{name}.npz"), ids=np.array([r["id"] for r in rows]), probs=probs, y=y,
                 lookalike=lookalike, handwritten=handwritten, langs=np.array([r["lang"] for r in rows]), detected=detected)
        ours = handwritten & (y == 1)
        if ours.any():
            print(f"  our handwritten positives out of fold: recall {(probs[ours] >= row_threshold[ours]).mean():.3f} of {ours.sum()}")

    # The confidence calibration: the engine, with each fold's heads, over that fold.
    encoder.CACHE_SIZE = max(encoder.CACHE_SIZE, len(seen) + 1024)
    encoder.remember(list(seen), np.array(list(seen.values())))
    results = []
    for k, heads in enumerate(fold_heads):
        with textmodel.trial_heads(heads):
            results += measure.run([r for r, f in zip(rows, folds, strict=True) if f == k])
    fitted = measure.fit(results)
    calibration.PATH.write_text(json.dumps(fitted, indent=1))
    calibration.mapping.cache_clear()
    metrics = measure.calibration_metrics(results)
    print(f"calibration: {', '.join(f'{a} n={v['n']}' for a, v in fitted['actions'].items())}; out-of-fold action accuracy "
          f"{metrics['accuracy']:.3f}")
    return 0


def subset(X, idx: np.ndarray):
    """Rows `idx` of the CSR triple `matrix` returns."""
    indptr, indices, values = X
    starts, ends = indptr[idx], indptr[idx + 1]
    take = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends, strict=True)]) if len(idx) else np.zeros(0, int)
    return np.concatenate([[0], np.cumsum(ends - starts)]), indices[take], values[take]


if __name__ == "__main__":
    sys.exit(main())
