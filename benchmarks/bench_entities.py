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
* The entity + identifier stage as the pipeline runs it (``encode_batch`` with the default
  recognisers, less ``encode_batch`` without any), per CPU second.
* Start-up (issue 38, Deliver 5): ``textdp --version`` against ``python -c 'import numpy'``, and
  a one-line ``textdp privatize`` with the defaults (a line with a name, and one without a
  candidate word), CPU seconds and peak RSS of the child process, best of 3.
* One long line (``TEXTDP_LONG_MB``, default 1): tickets joined by spaces into one document,
  privatised by ``textdp privatize`` (MVC ε = 8, defaults): CPU seconds, words per CPU second and
  peak RSS of the child process.

Speeds are words per CPU second of this (single-threaded) process: on a shared machine the wall
clock counts other people's work; the CPU time of one thread is what one core does.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

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
    lines += ["", *stage(vader), "", *startup(), "", *long_line(tickets)]
    load = os.getloadavg()
    lines += ["", f"Load average at the end: {load[0]:.1f} (1 min), {load[1]:.1f} (5 min) on "
              f"{os.cpu_count()} cores: figures taken on a shared machine are lower bounds."]
    return "\n".join(lines)


def stage(texts: list[str]) -> list[str]:
    """The entity + identifier stage inside ``encode_batch``, words per CPU second."""
    from textdp.text._codes import encode_batch
    from textdp.text.entities import Entities, Recognisers
    from textdp.text.identifiers import Identifiers

    n_words = sum(len(_WORD.findall(t)) for t in texts)
    recognisers = Recognisers(Identifiers(), Entities())
    ids = Identifiers()
    encode_batch(texts[:64], recognisers)
    encode_batch(texts[:64], ids)

    def cpu(spans) -> float:  # noqa: ANN001
        c0 = time.process_time()
        for i in range(0, len(texts), 4096):
            encode_batch(texts[i:i + 4096], spans)
        return time.process_time() - c0

    none, identifiers, both = cpu(None), cpu(ids), cpu(recognisers)
    return [f"### The entity + identifier stage ({len(texts):,} VADER sentences, {n_words:,} "
            "words; `encode_batch`, batches of 4,096, one thread)", "",
            f"- tokenisation alone: {n_words / none:,.0f} words per CPU second",
            f"- identifier stage alone (entities off): {n_words / (identifiers - none):,.0f} "
            "words per CPU second",
            f"- **entity + identifier stage: {n_words / (both - none):,.0f} words per CPU "
            "second** (goal ≥ 150,000)"]


_MEASURED = ("import resource, sys\n{body}\nu = resource.getrusage(resource.RUSAGE_SELF)\n"
             "print('RUSAGE', u.ru_utime + u.ru_stime, u.ru_maxrss, file=sys.stderr)\n"
             "sys.exit(status)")


def _child(body: str, *args: str) -> tuple[float, float, int]:
    """(CPU seconds, peak RSS MiB, exit status) of one child process running ``body`` (which
    sets ``status``), measured by the child itself at its end."""
    done = subprocess.run([sys.executable, "-c", _MEASURED.format(body=body), *args],
                          capture_output=True, text=True)
    last = [ln for ln in done.stderr.splitlines() if ln.startswith("RUSAGE ")][-1].split()
    return float(last[1]), int(last[2]) / 1024, done.returncode


#: The ``textdp`` console script, as a child body (arguments follow).
_TEXTDP = "from textdp.cli import main\nstatus = main(sys.argv[1:])"


def startup() -> list[str]:
    """``textdp --version`` and one-line releases: CPU seconds, best of 3 child processes, and
    the largest peak RSS of the 3."""
    lines = ["### Start-up (child processes: best of 3 CPU seconds, largest peak RSS of the 3)",
             "", "| command | CPU s | peak RSS MiB | goal |", "|---|---:|---:|---|"]
    rows = [("`python -c 'import numpy'`", ("import numpy\nstatus = 0",), "–"),
            ("`textdp --version`", (_TEXTDP, "--version"), "≤ 2× `import numpy`")]
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in (("without a candidate word", "hello there, your order ships monday."),
                           ("with a name", "Hello Maria Garcia, your order ships Monday.")):
            src = Path(tmp) / f"{len(rows)}.txt"
            src.write_text(text + "\n", encoding="utf-8")
            rows.append((f"one-line `textdp privatize --epsilon 8`, {name}",
                         (_TEXTDP, "privatize", str(src), "-o", str(src) + ".out.txt",
                          "--epsilon", "8"), "≤ 2.5 CPU-s, ≤ 350 MiB"))
        for name, argv, goal in rows:
            runs = []
            for _ in range(3):
                for out in Path(tmp).glob("*.out.txt"):
                    out.unlink()
                runs.append(_child(*argv))
            cpu = min(r[0] for r in runs)
            lines.append(f"| {name} | {cpu:.2f} | {max(r[1] for r in runs):,.0f} | {goal} |")
            if any(r[2] for r in runs):
                lines[-1] += " (failed)"
    return lines


def long_line(tickets: list) -> list[str]:
    """One line of ``TEXTDP_LONG_MB`` MB privatised by the command line (MVC ε = 8, defaults)."""
    mb = float(os.environ.get("TEXTDP_LONG_MB", "1"))
    pieces, size = [], 0
    while size < mb * 1e6:
        for t in tickets:
            piece = " ".join(t.text.split())
            pieces.append(piece)
            size += len(piece) + 1
            if size >= mb * 1e6:
                break
    line = " ".join(pieces)
    n_words = len(_WORD.findall(line))
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "line.txt"
        src.write_text(line + "\n", encoding="utf-8")
        cpu, rss, status = _child(_TEXTDP, "privatize", str(src), "-o", str(src) + ".out.txt",
                                  "--epsilon", "8")
    return [f"### One long line ({len(line) / 1e6:.1f} MB, {n_words:,} words, tickets joined by "
            "spaces; `textdp privatize --epsilon 8`, defaults)", "",
            f"- {cpu:.1f} CPU s, {n_words / cpu:,.0f} words per CPU second end to end, peak RSS "
            f"{rss:,.0f} MiB"
            + (" — failed" if status else "")]
