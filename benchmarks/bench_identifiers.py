"""Identifiers and the deny-list (issue 22): their cost on real text, and a 100k-term deny-list.

* the identifier stage (built-in recognisers) on VADER sentences and on generated support
  tickets dense in identifiers (numbers, e-mails, URLs, IBANs): seconds per batch pass, as
  ``encode_batch`` with and without it;
* a deny-list of 100,000 terms (generated names): building the Aho–Corasick automaton, and
  finding the terms in the VADER sentences (documents with non-ASCII characters take the slow
  key path), against the word rate of MVC end to end measured in the same run.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks.common import best_of, vader_texts


def _tickets(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        phone = f"+44 20 79{rng.integers(10, 99)} {rng.integers(1000, 9999)}"
        out.append(f"Ticket {i}: customer jane.doe{i}@example.com called {phone} on 2024-03-"
                   f"{rng.integers(10, 28)} about order {rng.integers(10**7, 10**8)}; see "
                   f"example.com/orders/{i} and IBAN DE89 3704 0044 0532 0130 00. Amount "
                   f"{rng.integers(10, 999)}.{rng.integers(10, 99)} EUR, version 10.0.{i}.")
    return out


def _encode_seconds(texts: list[str], identifiers: bool) -> float:
    """Best of 3, each with a fresh recogniser (its cache of phone candidates empty)."""
    from textdp.text._codes import encode_batch
    from textdp.text.identifiers import Identifiers

    def go():
        ids = None
        if identifiers:
            ids = Identifiers()
            ids.spans("warm +44 20 7946 0958 jane@example.com example.com")  # compile, load
        t0 = time.perf_counter()
        for i in range(0, len(texts), 4096):
            encode_batch(texts[i:i + 4096], ids)
        return time.perf_counter() - t0

    return min(go() for _ in range(3))


def run() -> str:
    from textdp.text.deny import DenyList

    vader = vader_texts(100_000)
    tickets = _tickets(2000)
    rows = []
    for name, texts in (("VADER sentences", vader), ("support tickets (generated)", tickets)):
        words = sum(len(t.split()) for t in texts)
        off = _encode_seconds(texts, False)
        on = _encode_seconds(texts, True)
        rows.append(f"| {name} | {len(texts):,} | {words:,} | {off:.3f} | {on:.3f} | "
                    f"{(on - off) / words * 1e6:.2f} |")
    rng = np.random.default_rng(1)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    terms = sorted({"".join(rng.choice(letters, size=rng.integers(4, 9))).title() + " "
                    + "".join(rng.choice(letters, size=rng.integers(4, 10))).title()
                    for _ in range(101_000)})[:100_000]
    t0 = time.perf_counter()
    deny = DenyList(terms)
    deny.spans("warm")
    build = time.perf_counter() - t0
    words = sum(len(t.split()) for t in vader)
    find = best_of(lambda: [deny.spans(t) for t in vader], repeat=3)
    lines = [
        "Identifier stage, in `encode_batch` (tokenisation) with and without it, best of 3 (a "
        "fresh recogniser each time: its cache of phone candidates starts empty), one process:",
        "",
        "| text | documents | words | s without | s with | µs per word added |",
        "|---|---:|---:|---:|---:|---:|",
        *rows,
        "",
        f"Deny-list of {len(deny):,} two-word terms: automaton built in {build:.2f} s (keys "
        f"included); finding them in the {len(vader):,} VADER sentences ({words:,} words) "
        f"takes {find:.2f} s ({words / find:,.0f} words/s, best of 3).",
    ]
    return "\n".join(lines)
