"""textdp's identifier stage on a peer's recogniser test suite kept outside the project (issue 22).

    python -m experiments.identifiers_peer --cases DIR [--commit SHA]

``DIR`` holds Presidio's own tests of its pattern recognisers, copied from its repository
(``presidio-analyzer/tests/test_{email,url,ip,iban,credit_card,phone}_recognizer.py``); neither
their code nor their cases are part of this project. The cases are read, never imported or run:
every ``@pytest.mark.parametrize`` table of those files is parsed (:mod:`ast`, literals only);
a row whose expected count is 0 is a negative case (the whole text), any other row a positive
one per expected ``(start, end)`` (the whole stripped text where the row gives no positions).
Tables with a ``leniency`` column keep only the rows at Presidio's default leniency (1).
Scored as ``experiments.identifiers`` scores its own cases, per kind:

* **fully masked**: no letter or digit of the expected span lies outside a recognised span;
* **right kind**: every letter and digit of it lies in spans of its kind;
* **negatives flagged**: a span of the suite's kind (and, separately, of any kind) in the text.

A positive with no letter or digit (``::``) cannot leak anything and is counted apart. Finally
every text is recognised again in batches of all the cases, shuffled, and the spans compared
with those of the text alone (**no output that depends on another document**).

The aggregate figures are saved in ``docs/results/identifiers/results.json`` (key ``peer``)
and the page ``docs/results/identifiers.md`` is redrawn; the cases are not saved.
"""

from __future__ import annotations

import argparse
import ast
import random
from pathlib import Path
from typing import Any

import numpy as np

from experiments import _harness as harness
from experiments import identifiers as own

NAME = "identifiers_peer"
say = harness.logger(NAME)
FILES = {"email": "test_email_recognizer.py", "url": "test_url_recognizer.py",
         "ip": "test_ip_recognizer.py", "iban": "test_iban_recognizer.py",
         "card": "test_credit_card_recognizer.py", "phone": "test_phone_recognizer.py"}
PAGE = harness.default_page(own.NAME)
#: Presidio's tests of its phone recogniser configured for one region (issue 35): their negatives
#: are numbers that are no phone numbers *of that region*. Scored when present in ``DIR``, with
#: textdp's default regions and with that region alone.
REGIONAL = {"TR": "test_tr_phone_number_recognizer.py", "PH": "test_ph_mobile_number_recognizer.py"}


def _literal(node: ast.AST) -> Any:
    """A literal, with f-strings that hold no placeholder read as plain strings."""
    if isinstance(node, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in node.values):
        return "".join(str(v.value) for v in node.values)
    if isinstance(node, ast.Tuple):
        return tuple(_literal(e) for e in node.elts)
    return ast.literal_eval(node)


def read_cases(folder: Path, kind: str, file: str | None = None,
               ) -> tuple[list[dict], list[dict], int]:
    """(positives, negatives, rows skipped as not literal) of one kind's test file (``file``,
    by default the kind's file of :data:`FILES`)."""
    tree = ast.parse((folder / (file or FILES[kind])).read_text(encoding="utf-8"))
    positives: dict[tuple, dict] = {}
    negatives: dict[str, dict] = {}
    skipped = 0
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "parametrize"
                and len(node.args) >= 2 and isinstance(node.args[1], ast.List)):
            continue
        names = [n.strip() for n in ast.literal_eval(node.args[0]).split(",")]
        for row_node in node.args[1].elts:
            try:
                row = dict(zip(names, _literal(row_node), strict=True))
            except (ValueError, TypeError):
                skipped += 1
                continue
            if "leniency" in row and row["leniency"] != 1:
                continue
            text = row.get("text", row.get("iban"))
            count = row["expected_len"]
            where = row.get("expected_positions", row.get("expected_res")) or ()
            if count == 0:
                negatives[text] = {"kind": kind, "text": text, "value": text, "start": 0,
                                   "end": len(text)}
                continue
            if not where:
                a = len(text) - len(text.lstrip())
                where = ((a, len(text.rstrip())),)
            for a, b in where:
                positives[(text, a, b)] = {"kind": kind, "text": text, "value": text[a:b],
                                           "start": a, "end": b}
    return list(positives.values()), list(negatives.values()), skipped


def _independent(texts: list[str], ids: Any, seed: int) -> int:
    """How many texts get other spans in a shuffled batch of all of them than alone."""
    from textdp.text._codes import _ENC, _ERR, _classes

    alone = {t: own.textdp_spans(t, ids) for t in texts}
    differ = set()
    rng = random.Random(seed)
    for size in (len(texts), 7, 2):
        order = texts[:]
        rng.shuffle(order)
        for i in range(0, len(order), size):
            batch = order[i:i + size]
            text = "".join(batch)
            codes = np.frombuffer(text.encode(_ENC, _ERR), dtype=np.uint32)
            cls = _classes(codes)[0]
            bounds = np.cumsum([0, *map(len, batch)]).astype(np.int64)
            s, e, k = ids.find(batch, text, codes, cls, bounds)
            for d, t in enumerate(batch):
                lo, hi = bounds[d], bounds[d + 1]
                mine = (s >= lo) & (s < hi)
                got = [(a - int(lo), b - int(lo), ids.kinds[c]) for a, b, c in
                       zip(s[mine].tolist(), e[mine].tolist(), k[mine].tolist(), strict=True)]
                if got != alone[t]:
                    differ.add(t)
    return len(differ)


def run(folder: Path, commit: str, seed: int) -> dict[str, Any]:
    from textdp.text.identifiers import DEFAULT_PHONE_REGIONS, Identifiers

    configs = {"defaults": Identifiers(),
               # The suite's phone tests configure Presidio's regions plus Japan and China.
               "suite_regions": Identifiers(phone_regions=(*DEFAULT_PHONE_REGIONS, "IL", "CA",
                                                           "JP", "CN"))}
    out: dict[str, Any] = {"presidio_commit": commit, "machine": harness.machine(),
                           "files": FILES, "configs": {}}
    all_texts: list[str] = []
    cases = {}
    for kind in own.KINDS:
        pos, neg, skipped = read_cases(folder, kind)
        cases[kind] = (pos, neg)
        all_texts += [c["text"] for c in pos + neg]
        out.setdefault("skipped_rows", {})[kind] = skipped
    for name, ids in configs.items():
        scores = {}
        for kind in own.KINDS:
            pos, neg = cases[kind]
            empty = [c for c in pos if not own._alnum(c["text"], c["start"], c["end"])]
            pos = [c for c in pos if c not in empty]
            s = own.score([c for c in pos], neg, lambda t, ids=ids: own.textdp_spans(t, ids))[kind]
            s["no_letter_or_digit"] = len(empty)
            # Flagged as the suite's kind (the score above counts a span of any kind).
            s["negatives_flagged_any_kind"] = s["negatives_flagged"]
            s["negatives_flagged"] = sum(
                any(k == kind for _, _, k in own.textdp_spans(c["text"], ids)) for c in neg)
            scores[kind] = s
            say(f"{name} {kind}: fully masked {s['fully_masked']}/{s['positives']}, right kind "
                f"{s['right_kind']}, negatives flagged {s['negatives_flagged']}/{s['negatives']}")
        texts = list(dict.fromkeys(all_texts))
        out["configs"][name] = {"scores": scores, "texts": len(texts),
                                "depend_on_other_documents": _independent(texts, ids, seed)}
    out["regional_phone"] = _regional(folder)
    return out


def _regional(folder: Path) -> dict[str, Any]:
    """The one-region phone suites of :data:`REGIONAL` found in ``folder``: region → config →
    scores (``negatives_flagged``: a phone span; ``negatives_flagged_any_kind``: any span)."""
    from textdp.text.identifiers import Identifiers

    out: dict[str, Any] = {}
    for region, file in REGIONAL.items():
        if not (folder / file).is_file():
            continue
        pos, neg, _ = read_cases(folder, "phone", file)
        for name, ids in (("defaults", Identifiers()),
                          ("own_region", Identifiers(phone_regions=(region,)))):
            s = own.score(pos, neg, lambda t, ids=ids: own.textdp_spans(t, ids))["phone"]
            s["negatives_flagged_any_kind"] = s["negatives_flagged"]
            s["negatives_flagged"] = sum(
                any(k == "phone" for _, _, k in own.textdp_spans(c["text"], ids)) for c in neg)
            out.setdefault(region, {})[name] = s
            say(f"{region} suite, {name}: fully masked {s['fully_masked']}/{s['positives']}, "
                f"negatives flagged {s['negatives_flagged']}/{s['negatives']}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog=harness.command(NAME), description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=Path, required=True, metavar="DIR",
                    help="folder holding Presidio's test_*_recognizer.py files (outside the "
                         "project); its TR and PH phone tests are scored too where present")
    ap.add_argument("--commit", default="unknown", help="the Presidio commit they come from")
    ap.add_argument("--out", type=Path, default=PAGE, help="the identifier page to redraw")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    missing = [f for f in FILES.values() if not (args.cases / f).is_file()]
    if missing:
        ap.error(f"{args.cases} lacks {', '.join(missing)}")
    saved = harness.figure_dir(args.out) / "results.json"
    if not saved.is_file():
        ap.error(f"{saved} is missing: run python -m experiments.identifiers first")
    peer = run(args.cases, args.commit, args.seed)
    results = harness.load_json(saved)
    results["peer"] = peer
    harness.save_json(saved, results, indent=1)
    own.render(results, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
