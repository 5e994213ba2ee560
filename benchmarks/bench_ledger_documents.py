"""Per-document ledger accounting (issue 36): the cost of the fingerprint pass with documents, of
the check and record of one release against R earlier releases of N documents, and the ledger's
size.

Run with ``.venv/bin/python -m benchmarks.run ledger_documents``. Each earlier release holds N
documents drawn at random from a pool of 3N (so they overlap); the new release draws N more and is
checked under ``refuse`` (budget far above: every document is composed, none refused). The
mechanism is a pure ε per document (its guarantee needs no vocabulary), so the figures are the
ledger's own. ``TEXTDP_BENCH_LEDGER_SIZES`` (e.g. ``"20x10000"``) sets other (R, N).
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from pathlib import Path

SIZES = os.environ.get("TEXTDP_BENCH_LEDGER_SIZES", "20x10000,100x10000,5x100000")


class _PerDocument:
    name = "per-document"

    def __init__(self, epsilon: float) -> None:
        from textdp.privacy import Guarantee, Notion

        self.notion = Notion.LOCAL_DP
        self.epsilon, self.parameters = epsilon, {"epsilon": epsilon}
        self.guarantee = Guarantee(notion=self.notion, epsilon=epsilon, metric="", per_word="")

    def privacy_map(self, d_in: float):
        from textdp.privacy import Budget

        return Budget(self.epsilon * d_in)


def _one(releases: int, n: int) -> str:
    from textdp.ledger import Ledger
    from textdp.privacy.fingerprint import InputHash

    rng = random.Random(0)
    pool = [f"document number {i} with a few more words in it" for i in range(3 * n)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "l.jsonl"
        for _ in range(releases):
            h = InputHash("texts").texts(rng.sample(pool, n))
            with Ledger(path).release(mechanism=_PerDocument(0.01), input_fingerprint=h.hexdigest(),
                                      records=h.count, seed=None):
                pass
        texts = rng.sample(pool, n)
        t = time.perf_counter()
        InputHash("texts", documents=False).texts(texts).hexdigest()
        bare = time.perf_counter() - t
        t = time.perf_counter()
        h = InputHash("texts").texts(texts)
        fp = h.hexdigest()
        with_docs = time.perf_counter() - t
        t = time.perf_counter()
        with Ledger(path, policy="refuse", budget=1e9).release(
                mechanism=_PerDocument(0.01), input_fingerprint=fp, records=h.count,
                seed=None) as rel:
            pass
        check = time.perf_counter() - t
        size = path.stat().st_size
    return (f"| {releases} | {n:,} | {bare:.2f} | {with_docs:.2f} | {check:.2f} | "
            f"{size / 1e6:.1f} | {rel.documents.before:,} |")


def run() -> str:
    rows = [_one(*map(int, size.split("x"))) for size in SIZES.split(",")]
    return "\n".join([
        "| earlier releases R | documents N | fingerprint s (no documents) | fingerprint s "
        "(with documents) | check + record s | ledger MB | released before |",
        "|---:|---:|---:|---:|---:|---:|---:|", *rows, "",
        "Check + record: read and validate the whole ledger, screen every document of the new "
        "release in floats against every earlier release, compose the worst exactly, append the "
        "pending line; the ledger line costs 16 bytes a document (12 bytes base64-encoded)."])
