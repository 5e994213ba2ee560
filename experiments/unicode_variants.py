"""Names written in NFD, with combining marks, homoglyphs or zero-width characters inside: does the
entity stage mask them as often as their NFC form? (issue 36 item 1)

    python -m experiments.unicode_variants            # recall table + folding throughput
    python -m experiments.unicode_variants --recall   # recall only (runs on older textdp too)

Held-out names: 38 accented names of many origins, each in a sentence written for this
experiment (not the ticket generator's templates, not the tests' names). Each sentence is
measured as written (NFC) and in four variants of its name, made with a fixed seed:

* **NFD**: the canonical decomposition (accents as combining marks);
* **combining**: 1–2 combining diacritical marks (U+0300–U+036F) added after letters inside
  the name;
* **zero-width**: 2 of ZWJ, ZWNJ, ZWSP, WORD JOINER, SOFT HYPHEN inserted inside the name;
* **homoglyph**: every letter that has a Cyrillic or Greek look-alike in this file's own table
  replaced by it.

A name is **masked** when entity spans (``Entities().find``, any kind) cover every one of its
characters. Throughput (CPU seconds of this process): the recognisers of a document
(``Recognisers.spans``, what the pipeline runs per document: identifiers and entities), and the
identifiers alone (``Identifiers.spans``, the stage with entities off), over a corpus of these
sentences (every variant), with the folding and with it replaced by the identity, in one
process, plus the folding alone (MB/s of UTF-8).
"""

from __future__ import annotations

import argparse
import time
import unicodedata

import numpy as np

SENTENCES = [
    "I had lunch with Renée Villeneuve after the meeting.",
    "The contract was drafted by Søren Højgaard last spring.",
    "Please ask Zoë Brontë to confirm the booking.",
    "Our new intern, Mikołaj Zieliński, starts on Monday.",
    "The package is addressed to Björk Guðmundsdóttir.",
    "Dr. Sebastián Muñoz will review the scans.",
    "We received a complaint from Ayşe Yılmaz yesterday.",
    "The keynote was given by Adébáyọ̀ Ògúnlẹ́sì in the main hall.",
    "Rezső Nyírő signed the delivery note.",
    "Send the draft to Ludmila Šťastná by noon.",
    "The tenant, Frédéric Bégaudeau, paid in cash.",
    "My neighbour Kristýna Horáčková found the dog.",
    "Agnès Lefèvre phoned about the refund.",
    "The account belongs to Ólafur Þórðarson.",
    "Mehmet Öztürkoğlu asked for a copy of the invoice.",
    "Héctor Gutiérrez left a voicemail this morning.",
    "The reviewer was Małgosia Wiśniewska from the audit team.",
    "According to Jérôme Rousseau, the shipment is late.",
    "Nguyễn Văn Thắng will pick up the keys.",
    "Please thank Dagný Jónsdóttir for her help.",
    "The claim was filed by Željko Marković in March.",
    "Our driver, Tõnu Kõiv, is running late.",
    "Ask Åke Strömqvist whether the room is free.",
    "The form was signed by Bartłomiej Żółkowski.",
    "Mireille Côté requested a callback.",
    "Ivana Čermáková moved to a new flat.",
    "The letter from Constança Gonçalves arrived today.",
    "Emeka Nwáńkwọ́ reported the broken screen.",
    "I forwarded the file to Lúcia Antunes.",
    "The manager, Gülşen Demirtaş, approved the refund.",
    "Ramón Ibáñez is waiting at reception.",
    "Yesterday Anđela Kovačević cancelled her order.",
    "The nurse, Eléonore Duchêne, checked the chart.",
    "Ingrid Bjørnstad has not replied yet.",
    "Please call Tadeusz Wójcik after lunch.",
    "Noémie Thébault booked the flight to Rome.",
    "Ferenc Pócsik sent the signed contract.",
    "The parcel for Kamilė Jankauskaitė is at the depot.",
]
NAMES = [
    "Renée Villeneuve", "Søren Højgaard", "Zoë Brontë", "Mikołaj Zieliński",
    "Björk Guðmundsdóttir", "Sebastián Muñoz", "Ayşe Yılmaz", "Adébáyọ̀ Ògúnlẹ́sì",
    "Rezső Nyírő", "Ludmila Šťastná", "Frédéric Bégaudeau", "Kristýna Horáčková", "Agnès Lefèvre",
    "Ólafur Þórðarson", "Mehmet Öztürkoğlu", "Héctor Gutiérrez", "Małgosia Wiśniewska",
    "Jérôme Rousseau", "Nguyễn Văn Thắng", "Dagný Jónsdóttir", "Željko Marković", "Tõnu Kõiv",
    "Åke Strömqvist", "Bartłomiej Żółkowski", "Mireille Côté", "Ivana Čermáková",
    "Constança Gonçalves", "Emeka Nwáńkwọ́", "Lúcia Antunes", "Gülşen Demirtaş", "Ramón Ibáñez",
    "Anđela Kovačević", "Eléonore Duchêne", "Ingrid Bjørnstad", "Tadeusz Wójcik",
    "Noémie Thébault", "Ferenc Pócsik", "Kamilė Jankauskaitė",
]
HOMOGLYPHS = {"a": "\u0430", "e": "\u0435", "o": "\u043e", "p": "\u0440", "c": "\u0441",
              "x": "\u0445", "y": "\u0443", "i": "\u0456", "s": "\u0455", "j": "\u0458",
              "A": "\u0410", "B": "\u0412", "E": "\u0415", "K": "\u041a", "M": "\u041c",
              "H": "\u041d", "O": "\u041e", "P": "\u0420", "C": "\u0421", "T": "\u0422",
              "N": "\u039d", "Z": "\u0396", "I": "\u0406"}
INVISIBLE = ["\u200d", "\u200c", "\u200b", "\u2060", "\u00ad"]
VARIANTS = ("NFC", "NFD", "combining", "zero-width", "homoglyph")


def _inner(name: str) -> list[int]:
    """Positions right after a letter that another letter follows (inside a word)."""
    return [i + 1 for i in range(len(name) - 1) if name[i].isalpha() and name[i + 1].isalpha()]


def variant(name: str, how: str, rng: np.random.Generator) -> str:
    name = unicodedata.normalize("NFC", name)
    if how == "NFC":
        return name
    if how == "NFD":
        return unicodedata.normalize("NFD", name)
    if how == "homoglyph":
        return "".join(HOMOGLYPHS.get(c, c) for c in name)
    inner = _inner(name)
    k = int(rng.integers(1, 3)) if how == "combining" else 2
    at = sorted(rng.choice(inner, size=min(k, len(inner)), replace=False).tolist(), reverse=True)
    out = list(name)
    for i in at:
        out.insert(i, chr(int(rng.integers(0x300, 0x34F))) if how == "combining"
                   else str(rng.choice(INVISIBLE)))
    return "".join(out)


def cases(seed: int = 0) -> dict[str, list[tuple[str, int, int]]]:
    """variant → [(sentence, start, end of the name)]."""
    rng = np.random.default_rng(seed)
    out: dict[str, list[tuple[str, int, int]]] = {v: [] for v in VARIANTS}
    for sentence, name in zip(SENTENCES, NAMES, strict=True):
        sentence = unicodedata.normalize("NFC", sentence)
        name = unicodedata.normalize("NFC", name)
        start = sentence.index(name)
        for how in VARIANTS:
            v = variant(name, how, rng)
            out[how].append((sentence[:start] + v + sentence[start + len(name):], start,
                             start + len(v)))
    return out


def recall(seed: int = 0) -> dict[str, tuple[int, int]]:
    from textdp.text.entities import Entities

    entities = Entities()
    out = {}
    for how, rows in cases(seed).items():
        found = entities.find([t for t, _, _ in rows])
        masked = sum(all(any(s <= i < e for s, e, _ in spans) for i in range(a, b))
                     for (_, a, b), spans in zip(rows, found, strict=True))
        out[how] = (masked, len(rows))
    return out


def throughput(size: int = 200_000) -> dict[str, float]:
    """MB/s (UTF-8) of the folding alone and of the recognisers with and without it."""
    from textdp.text import entities as E
    from textdp.text import fold as F
    from textdp.text import identifiers as I

    docs = [t for rows in cases().values() for t, _, _ in rows]
    corpus: list[str] = []
    while sum(map(len, corpus)) < size:
        corpus += docs
    mb = sum(len(d.encode()) for d in corpus) / 1e6
    text = "".join(corpus)
    bounds = np.cumsum([0, *map(len, corpus)])
    F._cased_table(), F._key_table()
    rec = E.Recognisers(I.Identifiers(), E.Entities())
    rec.spans(corpus[0])  # loads the model
    ids = I.Identifiers()

    def timed(fn) -> float:  # noqa: ANN001
        t = time.process_time()
        fn()
        return time.process_time() - t

    fold_s = min(timed(lambda: F.fold(text, bounds)) for _ in range(5))
    key_s = min(timed(lambda: F.fold_key(text, bounds)) for _ in range(5))
    with_s = timed(lambda: [rec.spans(d) for d in corpus])
    ids_with_s = min(timed(lambda: [ids.spans(d) for d in corpus]) for _ in range(3))

    class Identity(F.FoldedBatch):
        @property
        def cased(self):  # noqa: ANN202
            n = np.asarray(self.original_bounds)
            return F.Folded(self.original, n, None, n, identity=True)

    saved = E.FoldedBatch, I.FoldedBatch
    E.FoldedBatch = I.FoldedBatch = Identity
    try:
        without_s = timed(lambda: [rec.spans(d) for d in corpus])
        ids_without_s = min(timed(lambda: [ids.spans(d) for d in corpus]) for _ in range(3))
    finally:
        E.FoldedBatch, I.FoldedBatch = saved
    ascii_text = unicodedata.normalize("NFD", text).encode("ascii", "ignore").decode()
    ascii_s = min(timed(lambda: F.fold(ascii_text)) for _ in range(5))
    return {"MB": mb, "fold_cased_MBps": mb / fold_s, "fold_key_MBps": mb / key_s,
            "fold_cased_ascii_MBps": len(ascii_text) / 1e6 / max(ascii_s, 1e-9),
            "recognisers_with_fold_MBps": mb / with_s,
            "recognisers_without_fold_MBps": mb / without_s,
            "identifiers_with_fold_MBps": mb / ids_with_s,
            "identifiers_without_fold_MBps": mb / ids_without_s}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recall", action="store_true", help="recall only")
    args = parser.parse_args(argv)
    print("| variant | names masked | recall |\n|---|---|---|")
    for how, (k, n) in recall().items():
        print(f"| {how} | {k}/{n} | {k / n:.3f} |")
    if not args.recall:
        for key, value in throughput().items():
            print(f"{key}: {value:.3g}")


if __name__ == "__main__":
    main()
