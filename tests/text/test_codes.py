"""The pipeline's code-array path gives exactly what the regular-expression reference gives.

``Privatizer`` privatises every batch through :mod:`textdp.text._codes` (one UTF-32 array per
batch, document boundaries as offsets, numpy tokenisation, exact hashed lookup, pre-encoded case
variants). Here every output and every report field is compared with :class:`ReferencePrivatizer`
— the former string path, kept only as this oracle: a C-level regular-expression split and one
dict lookup per token — on adversarial Unicode text (NUL included), for every OOV policy, with
stop words kept or not, seeded and unseeded, over several batches.
"""

import operator
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from textdp.mechanisms import create
from textdp.pipeline import OOVPolicy, Privatizer
from textdp.text import count_structure, lookup_key, restore_case, split_batch
from textdp.text._codes import CodeBatch, CodeTable, _classes, encode_batch
from textdp.vocab import Vocabulary, load_default

EXOTIC = ["É", "é", "ß", "ǅ", "İ", "Σ", "ς", "ϒ", "𝐀", "😀", "\u0301", "٣", "²", "½", "\ud800",
          "\u2028", "\x1c", "\x85", "あ", "中", "\u00a0", "\r\n", "_", "'", "\u200d", "\x00",
          "\x00\x00"]


class ReferencePrivatizer(Privatizer):
    """The oracle: the same policy, noise and accounting, over Python strings split by regex.

    Production never runs this; it only checks the code-array path (``Privatizer._run_codes``).
    Identifier spans come from the same recogniser; each document is cut at them and the pieces
    between are split by the regular expressions of :mod:`textdp.text`.
    """

    def _run_codes(self, texts: list[str], batch: CodeBatch, start: int) -> list[str]:
        tokens, kinds, doc_of, templates, structure = _reference_tokens(texts, batch, self.identifiers)
        ident = kinds >= 0
        ids = np.array([-1 if i else _reference_row(self, t) for t, i in zip(tokens, ident, strict=False)],
                       dtype=np.int64)
        in_vocab = ids >= 0
        private = in_vocab.copy()
        if self.rules.stop_ids is not None:
            stop = in_vocab & np.isin(ids, self.rules.stop_ids)
            private &= ~stop
            self._tally.by_policy["stopwords_kept"] += int(stop.sum())
        oov = np.flatnonzero(~in_vocab & ~ident)
        is_number = np.fromiter((tokens[i][:1].isdecimal() for i in oov), dtype=bool,
                                count=oov.size)
        priv_pos = np.flatnonzero(private)

        need_random_oov = self.oov is OOVPolicy.RANDOM and oov.size > 0
        noise, random_oov = self._draw(ids[priv_pos], doc_of[priv_pos],
                                       doc_of[oov] if need_random_oov else None, start, len(texts))
        new_ids = self.mechanism.apply(ids[priv_pos], noise)

        out = list(tokens)
        changed = new_ids != ids[priv_pos]
        for t, w in zip(priv_pos[changed].tolist(), new_ids[changed].tolist(), strict=False):
            out[t] = restore_case(self._words[w], tokens[t])
        for j, t in enumerate(oov.tolist()):
            if self.oov is OOVPolicy.MASK:
                out[t] = self.mask_token
            elif self.oov is OOVPolicy.DROP:
                out[t] = ""
            elif self.oov is OOVPolicy.RANDOM:
                out[t] = restore_case(self._words[random_oov[j]], tokens[t])
        for t in np.flatnonzero(ident).tolist():
            kind = self.identifiers.kinds[kinds[t]]
            if kind == "denied" or self.oov in (OOVPolicy.MASK, OOVPolicy.RANDOM):
                out[t] = self.identifiers.label(kind)
            elif self.oov is OOVPolicy.DROP:
                out[t] = ""
        result = ["".join(p if isinstance(p, str) else out[p] for p in tpl) for tpl in templates]
        self._account(ids, new_ids, priv_pos, oov, is_number, doc_of, len(texts),
                      count_structure("a".join(structure)), kinds[ident])
        return result


def _reference_row(privatizer: Privatizer, token: str) -> int:
    """Lowercase form, then NFKC + case-fold key, then the first word with that key."""
    row = privatizer._lookup.get(token.lower())
    if row is not None:
        return row
    key = lookup_key(token)
    if key in privatizer._lookup:
        return privatizer._lookup[key]
    for r, w in enumerate(privatizer.mechanism.vocabulary.words):
        if lookup_key(w) == key:
            return r
    return -1


def _doc_pieces(texts, batch, identifiers):
    """Each document cut at its identifier spans: [(piece, kind or −1), …] per document."""
    if identifiers is None:
        return [[(t, -1)] for t in texts]
    starts, ends, kinds = identifiers.find(texts, batch.text, batch.codes, _classes(batch.codes)[0],
                                           batch.doc_bounds)
    out = []
    for d in range(len(texts)):
        base, stop = int(batch.doc_bounds[d]), int(batch.doc_bounds[d + 1])
        pieces, at = [], base
        for s, e, k in zip(starts.tolist(), ends.tolist(), kinds.tolist(), strict=False):
            if base <= s < stop:
                pieces += [(batch.text[at:s], -1), (batch.text[s:e], k)]
                at = e
        pieces.append((batch.text[at:stop], -1))
        out.append(pieces)
    return out


def _reference_tokens(texts, batch, identifiers):
    """(tokens, kind per token (−1: word or number), document per token, per-document templates
    of structure strings and token indices, structure runs)."""
    tokens, kinds, doc_of, templates, structure = [], [], [], [], []
    for d, pieces in enumerate(_doc_pieces(texts, batch, identifiers)):
        template = []
        for piece, kind in pieces:
            parts = [piece] if kind >= 0 else split_batch([piece]).parts[0]
            offset = 1 if kind >= 0 else 0  # split_batch: structure at even, tokens at odd slots
            for j, part in enumerate(parts):
                if (j + offset) % 2:
                    template.append(len(tokens))
                    tokens.append(part)
                    kinds.append(kind)
                    doc_of.append(d)
                else:
                    template.append(part)
                    structure.append(part)
        templates.append(template)
    return (tokens, np.array(kinds, dtype=np.int64), np.array(doc_of, dtype=np.int64), templates,
            structure)


def _with_case(replacements: np.ndarray, tokens: list[str], pos: np.ndarray) -> np.ndarray:
    """Each replacement in the case pattern of the token it replaces (restore_case)."""
    if pos.size == 0:
        return replacements
    originals = operator.itemgetter(*pos.tolist())(tokens) if pos.size > 1 else (tokens[pos[0]],)
    out = replacements.copy()
    out[:] = list(map(restore_case, replacements, originals))
    return out


@pytest.fixture(scope="module")
def vocab():
    g = load_default()
    extra = ["café", "straße", "naïve", "ǆemal", "internationalization", "counterrevolutionaries"]
    vectors = np.vstack([g.vectors[:3000],
                         np.random.default_rng(0).standard_normal((len(extra), 50)).astype(np.float32)])
    return Vocabulary(g.words[:3000] + extra, vectors, name="codes-test")


def _random_texts(rng, vocab, n_docs):
    pieces = vocab.words[:400] + [
        "Café", "CAFÉ", "STRASSE", "Straße", "NAÏVE", "İstanbul", "ΣΑΣ", "iPad", "McDonald",
        "THE", "The", "I", "A", "a", "42", "007", "x1", "Good", "GOOD", "gOOD", "ǅemal",
        "ǄEMAL", "Internationalization", "INTERNATIONALIZATION", "internationalizations",
        "counterrevolutionary", "Counterrevolutionaries", "abcdefghij", "xyzxyzxyzxyz"]
    alphabet = list("abcXYZ09  \t\n.,!?'-()$+<>~`^|") + EXOTIC
    texts = []
    for _ in range(n_docs):
        out = []
        for _ in range(rng.randint(0, 25)):
            if rng.random() < 0.6:
                out.append(rng.choice(pieces))
            else:
                out.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 4))))
            if rng.random() < 0.7:
                out.append(rng.choice([" ", ", ", ".", "  ", "\n", ""]))
        texts.append("".join(out))
    return texts


def _clean(report):
    report = dict(report)
    report.pop("created")
    report.pop("performance")
    return report


def test_encode_batch_matches_split_batch():
    rng = random.Random(2)
    texts = ["", "Hello, World!", "abc123def", "  x  ", "中文 text 😀 ok", "a_b", "½ ² ٣٣"]
    texts += ["".join(rng.choice(EXOTIC + list("ab1 .")) for _ in range(30)) for _ in range(50)]
    batch = encode_batch(texts)
    ref = split_batch(texts)
    tokens = [batch.token(i) for i in range(batch.n_tokens)]
    assert tokens == ref.words
    assert np.bincount(batch.doc_of, minlength=len(texts)).tolist() == ref.counts
    assert batch.doc_bounds.tolist() == np.cumsum([0] + [len(t) for t in texts]).tolist()


def test_lookup_is_exact(vocab):
    table = CodeTable(vocab.words, vocab.lookup)
    words = vocab.words + [w.upper() for w in vocab.words[:500]] + ["zzzzzzzzzzzzq", "internationalizatiom"]
    batch = encode_batch([" ".join(words)])
    tokens = [batch.token(i) for i in range(batch.n_tokens)]
    expected = [vocab.lookup.get(t.lower(), -1) for t in tokens]
    assert table.find(batch).tolist() == expected


@pytest.mark.parametrize("method,n_lists", [("geometric", 1), ("tem", 3)])
def test_fast_path_equals_reference(vocab, method, n_lists):
    rng = random.Random(7 + n_lists)
    mech = create("diffractor", vocab, epsilon=1.0, method=method, n_lists=n_lists, cache=False)
    for trial in range(40):
        texts = _random_texts(rng, vocab, rng.randint(1, 30))
        if trial % 9 == 0:
            texts = ["" for _ in texts]
        oov = ["mask", "keep", "drop", "random"][trial % 4]
        keep_stopwords = trial % 3 == 0
        mask = ["[MASK]", "Ü", "<m>", "\x00", "a\x00b"][trial % 5]
        seed = rng.randint(0, 1000) if trial % 2 else None
        fast = Privatizer(mech, entities="none", oov=oov, keep_stopwords=keep_stopwords, seed=seed,
                          mask_token=mask)
        ref = ReferencePrivatizer(mech, entities="none", oov=oov, keep_stopwords=keep_stopwords,
                                  seed=seed, mask_token=mask)
        if seed is None:
            fast.streams._rng = np.random.default_rng(trial)
            ref.streams._rng = np.random.default_rng(trial)
        out_fast = fast.run(texts) + fast.run(texts[::-1])
        out_ref = ref.run(texts) + ref.run(texts[::-1])
        assert out_fast == out_ref
        assert _clean(fast.report()) == _clean(ref.report())


def test_nul_in_text_takes_the_production_path(vocab):
    mech = create("diffractor", vocab, epsilon=1000.0, cache=False)
    p = Privatizer(mech, entities="none")
    assert p.run(["Good\x00day", "fine"]) == ["Good\x00day", "fine"]
    assert p.report()["tokens"]["by_class"]["other"] == 1
    assert not hasattr(Privatizer, "_run_strings")  # one production path


NUL_DOCS = ["abc\x00", "\x00def", "\x00", "", "\x00\x00\x00", "Good\x00day", "x\x00\x00y 42\x00",
            "The\x00\x00House", "", "\x00😀\x00", "NUL\x00"]


@pytest.mark.parametrize("oov", ["mask", "keep", "drop", "random"])
@pytest.mark.parametrize("seed", [5, None])
def test_nul_empty_and_all_nul_documents_equal_the_oracle(vocab, oov, seed):
    mech = create("diffractor", vocab, epsilon=1.0, cache=False)
    for texts in (NUL_DOCS, NUL_DOCS[::-1], ["\x00"] * 5, [""] * 3, ["", "\x00", ""], ["\x00ab"]):
        fast = Privatizer(mech, entities="none", oov=oov, seed=seed)
        ref = ReferencePrivatizer(mech, entities="none", oov=oov, seed=seed)
        if seed is None:
            fast.streams._rng, ref.streams._rng = np.random.default_rng(1), np.random.default_rng(1)
        out = fast.run(texts) + fast.run(texts[1:])
        assert out == ref.run(texts) + ref.run(texts[1:])
        assert len(out) == 2 * len(texts) - 1
        assert [t.count("\x00") for t in out] == [t.count("\x00") for t in texts + texts[1:]]
        assert _clean(fast.report()) == _clean(ref.report())


def test_documents_never_merge_across_boundaries(vocab):
    """Without a separator, adjacent documents must still not join runs: 'ab' + 'cd' is two tokens."""
    batch = encode_batch(["ab", "cd", "", "12", "34", "  ", " ", "\x00", "\x00"])
    assert [batch.token(i) for i in range(batch.n_tokens)] == ["ab", "cd", "12", "34"]
    assert batch.doc_of.tolist() == [0, 1, 3, 4]
    assert (batch.whitespace, batch.other) == (2, 2)
    same = batch.assemble(batch.codes, 0, batch.starts.copy(), batch.ends - batch.starts)
    assert same == ["ab", "cd", "", "12", "34", "  ", " ", "\x00", "\x00"]


def test_character_classes_equal_the_regular_expressions_on_all_of_unicode():
    """The code-array classes (textdp.text._codes) equal the token regex's, code point by code point."""
    import sys

    from textdp.text import _patterns
    from textdp.text._codes import (
        DIGIT,
        LETTER,
        MARK,
        OTHER,
        PUNCTUATION,
        WHITESPACE,
        _attach_marks,
        _char_class,
    )

    everything = "".join(map(chr, range(sys.maxunicode + 1)))
    kind = {"word": LETTER, "number": DIGIT, "whitespace": WHITESPACE, "punctuation": PUNCTUATION,
            "other": OTHER}
    expected = np.full(len(everything), 255, dtype=np.uint8)
    for m in _patterns()[0].finditer(everything):  # runs: every character of a run has its class
        expected[m.start():m.end()] = kind[m.lastgroup]
    codes = np.frombuffer(everything.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    actual, marks = _classes(codes)  # a mark takes the class of the letter or digit before it
    _attach_marks(actual, marks, np.array([0, codes.size]))
    assert (expected != 255).all()
    assert {_char_class(everything[i]) for i in marks.tolist()} == {MARK}
    assert np.flatnonzero(actual != expected).tolist() == []


def test_unicode_lookup_and_bytes_kept(vocab):
    """NFKC + case-fold lookup; a word returned unchanged keeps the input's bytes."""
    mech = create("diffractor", vocab, epsilon=1e6, cache=False)
    texts = ["ｈｅｌｌｏ ﬁne HELLO STRASSE cafe\u0301 a\u200dnd"]
    out = Privatizer(mech, entities="none", seed=1).run(texts)
    assert out == texts  # all found (ε huge: unchanged), bytes kept; a\u200dnd finds "and"
    assert ReferencePrivatizer(mech, entities="none", seed=1).run(texts) == texts
    out = Privatizer(mech, entities="none", seed=1).run(["zzq\u0301x re\u0301sume\u0301"])
    assert out == ["[MASK] [MASK]"]


_FORMAT = ["\u200d", "\u200c", "\u200b", "\ufe0f", "\u0301", "\u20e3", "\u00ad", "👩", "💻", "e",
           "The", "house", "42", " ", "ß", "ﬁne", "ｈｅｌｌｏ", "jsmith@acme.com", "555-123-4567"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.sampled_from(_FORMAT), max_size=12).map("".join), min_size=1, max_size=6),
       st.sampled_from(["mask", "keep", "drop", "random"]))
def test_fast_path_equals_reference_on_format_and_combining_text(vocab, texts, oov):
    mech = create("diffractor", vocab, epsilon=1.0, cache=False)
    fast = Privatizer(mech, entities="none", oov=oov, seed=3)
    ref = ReferencePrivatizer(mech, entities="none", oov=oov, seed=3)
    assert fast.run(texts) == ref.run(texts)
    assert _clean(fast.report()) == _clean(ref.report())
    if oov == "keep":  # nothing replaced at all when nothing is in the vocabulary: exact round trip
        keep_all = Privatizer(create("diffractor", vocab, epsilon=1e9, cache=False), oov="keep", seed=1,
                              entities="none")
        assert keep_all.run(texts) == texts
