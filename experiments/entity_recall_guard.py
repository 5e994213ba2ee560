"""Recall guard for the entity + identifier stage: does a change mask everything a base revision
masked? (issue 35, Deliver 4)

    python -m experiments.entity_recall_guard                 # base: main
    python -m experiments.entity_recall_guard --base 21ff086 --vader 0.25 --json out.json

A change to how the stage runs (the screen, the windows, how spaCy is called, the map back from
the folded text) must not change what it finds. This runs the stage of two revisions on the same
documents, each in a child process importing that revision's ``src`` (the base is exported with
``git archive``), and compares the characters masked per document: what
``Recognisers(Identifiers(), Entities()).spans(text)`` covers with a kind other than ``allowed``
(the spans that become labels in the output; the mechanism never sees them). No randomness is
involved: the stage is a function of each document.

Documents (built once here, the same bytes for both children):

* **tickets**: generated support tickets (:func:`textdp.datasets.tickets.generate_tickets`,
  seed 0, ``--tickets`` of them);
* **VADER**: a share (``--vader``) of the four VADER sets' sentences;
* **hostile**: the 38 sentences of :mod:`experiments.unicode_variants` in its five writings (NFC,
  NFD, marks added, zero-width characters, homoglyphs); the tickets joined into one long
  document with single spaces, and with no whitespace at all between them; a long
  whitespace-free token with capitals; tabs, CRLF and NBSP as separators; a lone surrogate.

The answer is the number of characters masked by the base and not by the new revision (the
guard: 0), the reverse, and documents whose kinds differ.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, sys, time
from textdp.text.entities import Entities, Recognisers, load_model
from textdp.text.identifiers import Identifiers
import textdp
docs = json.load(open(sys.argv[1], encoding="utf-8", errors="surrogatepass"))
load_model()
rec = Recognisers(Identifiers(), Entities())
kinds = rec.kinds
out = []
c0 = time.process_time()
for group, texts in docs.items():
    for text in texts:
        s, e, k = rec.spans(text)
        out.append([group, [[int(a), int(b), kinds[int(c)]] for a, b, c in zip(s, e, k)]])
cpu = time.process_time() - c0
json.dump({"spans": out, "cpu": cpu, "textdp": textdp.__file__}, open(sys.argv[2], "w"))
"""


def _export(revision: str, into: Path) -> Path:
    blob = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "src"],
                          check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(blob)) as tar:
        tar.extractall(into, filter="data")
    return into / "src"


def documents(n_tickets: int, vader_share: float) -> dict[str, list[str]]:
    """The documents both revisions read, by group."""
    from experiments.unicode_variants import cases
    from textdp.datasets import VADER_SETS, load_vader
    from textdp.datasets.tickets import generate_tickets

    tickets = [t.text for t in generate_tickets(n_tickets, seed=0)]
    vader = [s.text for name in VADER_SETS for s in load_vader(name)]
    vader = vader[: int(len(vader) * vader_share)]
    variants = [text for rows in cases(0).values() for text, _, _ in rows]
    hostile = [
        " ".join(tickets[:100]),
        "".join(t.replace(" ", "").replace("\n", "") for t in tickets[:20]),
        "See https://Example.com/" + "AbCdEfGhIjKlMnOp" * 400 + " said Maria Garcia from Leeds.",
        "Maria\tGarcia\r\nlives in Leeds.\r\nCall\u00a0Ji-woo Müller at Acme Ltd.",
        "Thanks, Maria \ud800 Garcia, see you in Paris.",
        "x" * 5000 + " Maria Garcia " + "y" * 5000,
    ]
    return {"tickets": tickets, "vader": vader, "variants": variants, "hostile": hostile}


def _run(src: Path, docs_path: Path, out_path: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{ROOT}", "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, "-c", _CHILD, str(docs_path), str(out_path)], check=True,
                   env=env, cwd=ROOT)
    result = json.loads(out_path.read_text())
    if not result["textdp"].startswith(str(src)):
        raise RuntimeError(f"the child imported {result['textdp']}, not {src}")
    return result


_WORDS = re.compile(r"\w+")


def _masked(spans: list) -> dict[int, str]:
    return {i: kind for a, b, kind in spans if kind != "allowed" for i in range(a, b)}


def compare(docs: dict[str, list[str]], base: list, new: list) -> dict:
    """Per group: characters masked by base only, by new only, by both; kind changes; examples."""
    flat = [t for texts in docs.values() for t in texts]
    out: dict[str, dict] = {}
    for text, (group, b_spans), (_, n_spans) in zip(flat, base, new, strict=True):
        row = out.setdefault(group, {"documents": 0, "base_only": 0, "new_only": 0, "both": 0,
                                     "kind_changed": 0, "base_only_word_chars": 0,
                                     "words_lost": [], "examples": []})
        row["documents"] += 1
        mb, mn = _masked(b_spans), _masked(n_spans)
        lost = sorted(set(mb) - set(mn))
        gained = sorted(set(mn) - set(mb))
        row["base_only"] += len(lost)
        row["new_only"] += len(gained)
        row["both"] += len(set(mb) & set(mn))
        row["kind_changed"] += sum(mb[i] != mn[i] for i in set(mb) & set(mn))
        # Whitespace between two spans that were one (a name, then a street on the next line)
        # is no leak: what counts is a letter or digit the base masked and the new one releases.
        row["base_only_word_chars"] += sum(text[i].isalnum() for i in lost)
        row["words_lost"] += [w.group() for w in _WORDS.finditer(text)
                              if any(w.start() <= i < w.end() for i in lost)]
        if (lost or gained) and len(row["examples"]) < 5:
            at = (lost or gained)[0]
            row["examples"].append({"lost": len(lost), "gained": len(gained),
                                    "context": text[max(0, at - 60):at + 60]})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", default="main", help="git revision to compare with")
    parser.add_argument("--tickets", type=int, default=400)
    parser.add_argument("--vader", type=float, default=1.0, help="share of the VADER sentences")
    parser.add_argument("--json", type=Path, help="write the comparison here")
    args = parser.parse_args(argv)
    docs = documents(args.tickets, args.vader)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        docs_path = tmp_path / "docs.json"
        docs_path.write_text(json.dumps(docs), encoding="utf-8", errors="surrogatepass")
        base_src = _export(args.base, tmp_path / "base")
        t0 = time.time()
        base = _run(base_src, docs_path, tmp_path / "base.json")
        new = _run(ROOT / "src", docs_path, tmp_path / "new.json")
        wall = time.time() - t0
    result = compare(docs, base["spans"], new["spans"])
    lines = [f"Base `{args.base}` against this checkout; CPU s of the stage: base "
             f"{base['cpu']:.1f}, new {new['cpu']:.1f} (both children {wall:.0f} s wall; load "
             f"{os.getloadavg()[0]:.1f}).", "",
             "| documents | n | masked by both (chars) | base only | of which letters or digits "
             "| new only | kind changed |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for group, row in result.items():
        lines.append(f"| {group} | {row['documents']:,} | {row['both']:,} | {row['base_only']:,} "
                     f"| {row['base_only_word_chars']:,} | {row['new_only']:,} "
                     f"| {row['kind_changed']:,} |")
    for group, row in result.items():
        if row["words_lost"]:
            lines.append(f"- {group}: words the base masked (in part or whole) and the new one "
                         f"releases: {', '.join(row['words_lost'][:60])}")
    for group, row in result.items():
        for ex in row["examples"]:
            lines.append(f"- {group}: lost {ex['lost']}, gained {ex['gained']}: "
                         f"{ex['context']!r}")
    print("\n".join(lines))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8",
                             errors="surrogatepass")
    return 1 if any(row["base_only"] for row in result.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
