"""Entities (issue 22): what leaks from support tickets, recall and precision, VADER false
positives, and speed.

Run with ``.venv/bin/python -m benchmarks.run entities`` (one BLAS thread; spaCy's own
matrix products are single-threaded). ``TEXTDP_TICKETS`` (default 200) sets the number of
generated tickets.

* Survival: 200 generated tickets (:func:`textdp.datasets.tickets.generate_tickets`, seed 0)
  privatised with MVC at ε = 8 and every other option at its default, entities on and off; a
  value survives a ticket when it appears in the output as a whole word (case-insensitive).
* Recall and precision of the entity stage alone (:meth:`textdp.text.entities.Entities.find`)
  against the generator's spans: a name, street or city is *found* when entity spans cover it
  completely; a predicted span is *right* when it overlaps an inserted value.
* VADER: the fraction of in-vocabulary words (GloVe 6B 50d vocabulary) inside entity spans,
  over the four sets (23,703 sentences), and the entity stage's words/s on them.
* End to end: ``Privatizer.run`` words/s for MVC and 1-Diffractor, entities on and off.

Speeds are words per CPU second of this (single-threaded) process: on a shared machine the wall
clock counts other people's work; the CPU time of one thread is what one core does.
"""

from __future__ import annotations

import os
import re
import time
from collections import Counter

_WORD = re.compile(r"\w+")


def _survives(value: str, text: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text, re.IGNORECASE) is not None


def survival(tickets: list, outputs: list[str]) -> dict[str, tuple[int, int]]:
    """kind → (tickets where the value survived, tickets that contain it)."""
    out: dict[str, list[int]] = {}
    for ticket, text in zip(tickets, outputs, strict=True):
        kinds = {k for _, _, k in ticket.spans}
        for kind in ("first_name", "last_name", "street_name", "city", "email", "phone", "order"):
            if kind not in kinds:
                continue
            value = ticket.values[kind]
            if kind == "order":
                value = re.search(r"\d+", value).group()
            gone = not _survives(value, text)
            if kind == "phone":  # the last group of digits is the subscriber's own
                gone = gone and not _survives(re.findall(r"\d+", value)[-1], text)
            if kind == "email":
                gone = gone and not _survives(value.split("@")[0], text)
            pair = out.setdefault(kind, [0, 0])
            pair[0] += not gone
            pair[1] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}


def merged(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Overlapping entity spans as one (``address`` if one of them is, else the first), allow-list
    spans left out: what :class:`textdp.text.entities.Recognisers` makes of them (before it
    widens them to whole words)."""
    out: list[list] = []
    for a, b, kind in sorted(s for s in spans if s[2] != "allowed"):
        if out and a < out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
            out[-1][2] = "address" if kind == "address" else out[-1][2]
        else:
            out.append([a, b, kind])
    return [tuple(s) for s in out]


def recall_precision(tickets: list, found: list[list[tuple[int, int, str]]]) -> dict:
    """Per gold kind: (found by any entity label, found with the right label, total); and the
    predicted spans that overlap an inserted value, over all predicted spans."""
    right = {"first_name": "person", "last_name": "person", "street": "address",
             "city": "location"}
    gold_counts: dict[str, list[int]] = {k: [0, 0, 0] for k in right}
    hits = total = 0
    for ticket, spans in zip(tickets, found, strict=True):
        spans = merged(spans)
        n = len(ticket.text)
        label = [None] * n
        for a, b, kind in spans:
            for i in range(a, b):
                label[i] = kind
        for a, b, kind in ticket.spans:
            if kind not in right:
                continue
            inside = [label[i] for i in range(a, b) if not ticket.text[i].isspace()]
            row = gold_counts[kind]
            row[0] += all(x is not None for x in inside)
            row[1] += all(x == right[kind] for x in inside)
            row[2] += 1
        for a, b, _ in spans:
            total += 1
            hits += any(a < e and s < b for s, e, _ in ticket.spans)
    return {"gold": {k: tuple(v) for k, v in gold_counts.items()}, "precision": (hits, total)}


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}% ({a}/{b})" if b else "–"


def _vader_all() -> list[str]:
    from textdp.datasets import VADER_SETS, load_vader

    return [s.text for name in VADER_SETS for s in load_vader(name)]


def run() -> str:
    from threadpoolctl import threadpool_limits

    import textdp
    from textdp.datasets.tickets import generate_tickets
    from textdp.datasets.vader import vader_lexicon
    from textdp.mechanisms import create
    from textdp.pipeline import Privatizer
    from textdp.privacy.report import summary_line
    from textdp.text.entities import Entities, load_model
    from textdp.vocab import load_default

    threadpool_limits(1)
    load_model()
    n = int(os.environ.get("TEXTDP_TICKETS", "200"))
    tickets = generate_tickets(n, seed=0)
    texts = [t.text for t in tickets]
    lines = [f"### Support tickets ({n} generated, seed 0)", "",
             "Survival: the fraction of tickets whose value appears unchanged in the output, "
             "MVC ε = 8, defaults otherwise (seed 1).", "",
             "| value | entities on (default) | entities off | goal |", "|---|---|---|---|"]
    on = textdp.privatize(texts, mechanism="mvc", epsilon=8, seed=1)
    off = textdp.privatize(texts, mechanism="mvc", epsilon=8, seed=1, entities="none")
    s_on, s_off = survival(tickets, on.texts), survival(tickets, off.texts)
    goals = {"first_name": "≤ 2%", "last_name": "≤ 2%", "street_name": "≤ 5%", "city": "≤ 5%",
             "email": "0%", "phone": "0%", "order": "0%"}
    for kind, goal in goals.items():
        if kind in s_on:
            lines.append(f"| {kind.replace('_', ' ')} | {_pct(*s_on[kind])} | "
                         f"{_pct(*s_off[kind])} | {goal} |")
    lines += ["", f"Summary line (entities on): `{summary_line(on.report)}`"]

    entities = Entities()
    found = entities.find(texts)
    rp = recall_precision(tickets, found)
    lines += ["", "Entity stage alone (before identifiers and the mechanism):", "",
              "| inserted value | covered by an entity label | with the right label |",
              "|---|---|---|"]
    for kind, (anyk, rightk, total) in rp["gold"].items():
        lines.append(f"| {kind.replace('_', ' ')} | {_pct(anyk, total)} | {_pct(rightk, total)} |")
    lines += ["", f"Precision: {_pct(*rp['precision'])} of predicted entity spans overlap an "
              "inserted value (names, streets, cities, e-mails, phones, order numbers).",
              "Predicted kinds (overlaps merged): " + ", ".join(
                  f"{k} {v}" for k, v in Counter(k for f in found for *_, k in merged(f)).items())]

    # VADER: false positives and speed of the entity stage.
    vader = _vader_all()
    words = [_WORD.findall(t) for t in vader]
    n_words = sum(map(len, words))
    t0, c0 = time.perf_counter(), time.process_time()
    vfound = entities.find(vader)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    vocab = load_default()
    # VADER's own sentiment lexicon: its words are almost never names, so those masked are false
    # positives, and the words a sentiment task needs most.
    lexicon = {w.lower() for w in vader_lexicon()}
    in_vocab = masked = sentiment = sentiment_masked = 0
    for text, spans in zip(vader, vfound, strict=True):
        inside = [(a, b) for a, b, k in spans if k != "allowed"]
        for m in _WORD.finditer(text):
            word = m.group().lower()
            if word in vocab.lookup or word in lexicon:
                hit = any(a <= m.start() and m.end() <= b for a, b in inside)
                if word in vocab.lookup:
                    in_vocab += 1
                    masked += hit
                if word in lexicon:
                    sentiment += 1
                    sentiment_masked += hit
    kinds = Counter(k for f in vfound for *_, k in merged(f))
    window_words = sum(len(_WORD.findall(t[a:b])) for t in vader for a, b in entities.windows(t))
    lines += ["", f"### VADER sentences ({len(vader):,} sentences, {n_words:,} words)", "",
              f"- in-vocabulary words inside entity spans: {_pct(masked, in_vocab)} "
              "(goal ≤ 3%; most are real names of actors, directors, places — see "
              "docs/results/entities.md)",
              f"- words of VADER's sentiment lexicon inside entity spans: "
              f"{_pct(sentiment_masked, sentiment)}",
              "- entities: " + ", ".join(f"{k} {v:,}" for k, v in kinds.items()),
              f"- the screen sent {100 * window_words / n_words:.0f}% of the words to the model",
              f"- entity stage: {n_words / cpu:,.0f} words per CPU second, one thread (goal ≥ "
              f"20,000 words/s on one core); wall clock {n_words / seconds:,.0f} words/s on the "
              "shared machine"]

    # End to end, entities on and off.
    sample = vader[:8000]
    sample_words = sum(len(_WORD.findall(t)) for t in sample)
    lines += ["", f"### End to end ({len(sample):,} VADER sentences, {sample_words:,} words, "
              "unseeded, batch 4096; words per CPU second, one BLAS thread)", "",
              "| mechanism | entities on | entities off |",
              "|---|---|---|"]
    for name, eps in (("mvc", 8.0), ("diffractor", 1.0)):
        mech = create(name, epsilon=eps)
        rates = []
        for ents in ("default", "none"):
            runner = Privatizer(mech, entities=ents)
            runner.run(sample[:100])  # warm
            c0 = time.process_time()
            for s in range(0, len(sample), 4096):
                runner.run(sample[s:s + 4096])
            rates.append(sample_words / (time.process_time() - c0))
        lines.append(f"| {name} (ε = {eps:g}) | {rates[0]:,.0f} | {rates[1]:,.0f} |")
    load = os.getloadavg()
    lines += ["", f"Load average at the end: {load[0]:.1f} (1 min), {load[1]:.1f} (5 min) on "
              f"{os.cpu_count()} cores: figures taken on a shared machine are lower bounds."]
    return "\n".join(lines)
