"""Text in, text out: token policy, per-document randomness, case restoration and the report.

:class:`Privatizer` drives a word mechanism over batches of documents. Per batch it finds the
identifiers (e-mail addresses, URLs, …: one token each, :mod:`textdp.text.identifiers`), splits
every document once, looks every alphanumeric run up in the vocabulary (NFKC + case-fold key),
draws the mechanism's noise (per document when seeded), applies the mechanism to the whole batch
in one vectorised call, restores case patterns and joins the documents back. No Python code runs per token.

One path for every text: the batch is one UTF-32 code array with document boundaries as offsets
(:mod:`textdp.text._codes`: numpy tokenisation, exact hashed lookup, pre-encoded case variants, one
gather to rebuild the text), so a document may contain any character, NUL included. The tests
hold it against a reference that splits with the regular expressions of :mod:`textdp.text`.

Memory is bounded by characters, not documents: one vectorised step takes at most ``batch_chars``
characters, and a document longer than :data:`SEGMENT_CHARS` is cut into segments at canonical
places (independent of the batch) that draw, in order, from that document's one generator. The
mechanisms' ``draw`` is not split-invariant (it draws whole arrays of one law, then the next), so
the segments, not the batches, fix where a document's stream is cut: the output of a seeded run
depends on neither ``batch_size`` nor ``batch_chars``.
"""

from __future__ import annotations

import re
import time
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import numpy as np

from textdp import _random
from textdp._checks import check_probability, check_seed
from textdp.allocation import Allocation, Allocator, resolve_allocation
from textdp.mechanisms import WordMechanism, create
from textdp.privacy.unchanged import DEFAULT_UNCHANGED_WARNING
from textdp.tallies import Tallies, TallyCounter
from textdp.text import TokenClass, restore_case
from textdp.text._codes import MIXED, UPPER, CodeBatch, CodeTable, encode_batch
from textdp.text.entities import ENTITY_KINDS, OFF_WARNING, Entities, Recognisers
from textdp.text.identifiers import DENIED, Identifiers
from textdp.text.stopwords import ENGLISH_STOPWORDS
from textdp.vocab import Vocabulary

if TYPE_CHECKING:
    from textdp.privacy.report import Report, Section

__all__ = ["OOVPolicy", "Privatizer", "PrivatizeResult", "privatize", "DEFAULT_MASK"]

DEFAULT_MASK = "[MASK]"

#: A document longer than this (characters) is privatised in segments cut at canonical places:
#: the first whitespace-to-text boundary at or after each multiple of it (module ``_segments``).
#: The segments of a document draw, in order, from that document's one generator, so a seeded
#: run's output does not depend on how documents are grouped into batches.
SEGMENT_CHARS = 1 << 16
#: Default bound on the characters privatised in one vectorised step (memory ~ tokens, not
#: documents: a 30 MB line is privatised 256 Ki characters at a time).
DEFAULT_BATCH_CHARS = 1 << 18

_BREAK = re.compile(r"\s(?=\S)")
_INSIDE = frozenset({"Mn", "Mc", "Me", "Cf"})  # a hard cut never lands before one of these


class OOVPolicy(StrEnum):
    """What happens to a word outside the vocabulary, and to a number (the mechanism has no
    neighbours for them): ``mask`` replaces it by the mask token, ``keep`` releases it
    unprotected (the report lists it), ``drop`` removes it, ``random`` draws a vocabulary word
    uniformly, independently of the input.

    An identifier (e-mail address, URL, …: :mod:`textdp.text.identifiers`) is one token:
    ``mask`` and ``random`` replace it by its kind's label (``[EMAIL]``; a random word would
    read as a word and hide that an identifier was removed), ``keep`` releases it (unprotected,
    counted) and ``drop`` removes it. Deny-list terms are masked under every policy."""

    MASK = "mask"
    KEEP = "keep"
    DROP = "drop"
    RANDOM = "random"


def _check_oov(oov: object) -> OOVPolicy:
    try:
        return OOVPolicy(oov)
    except ValueError:
        choices = ", ".join(p.value for p in OOVPolicy)
        raise ValueError(f"unknown oov policy {oov!r}; choose one of: {choices}") from None




_TABLES: dict[int, tuple[Vocabulary, CodeTable]] = {}


def _code_table(vocab: Vocabulary) -> CodeTable:
    """The encoded lookup table of ``vocab`` (built once per vocabulary object)."""
    hit = _TABLES.get(id(vocab))
    if hit is not None and hit[0] is vocab:
        return hit[1]
    table = CodeTable(vocab.words, vocab.lookup)
    if len(_TABLES) >= 8:
        _TABLES.pop(next(iter(_TABLES)))
    _TABLES[id(vocab)] = (vocab, table)
    return table


class Privatizer:
    """Privatise documents with a word mechanism and account for every token.

    Args:
        mechanism: a built word mechanism.
        oov: what happens to out-of-vocabulary words and to numbers: ``mask`` (replace by
            ``mask_token``), ``keep`` (released unprotected), ``drop`` (removed), ``random``
            (a uniformly random vocabulary word, independent of the input).
        mask_token: the placeholder of ``oov="mask"``.
        keep_stopwords: keep English function words unchanged (they are then unprotected).
        seed: None draws from OS entropy; an integer makes the run reproducible (document i always
            uses the generator derived from (seed, i)) and is flagged in the report.
        unchanged_warning: the report warns when the expected fraction of privatised words
            returned unchanged exceeds it (its ``deniability`` section; default 0.5).
        batch_chars: characters privatised per vectorised step (memory vs. speed); a longer
            document is processed in segments (:data:`SEGMENT_CHARS`). It never changes the
            output of a seeded run.
        identifiers: recognise e-mail addresses, URLs, IP addresses, IBANs, card and phone
            numbers as one token each (True), not at all (False), or as configured by an
            :class:`textdp.text.identifiers.Identifiers`.
        identifier_labels: kind → placeholder (``{"email": "<email>"}``).
        identifier_patterns: extra kinds, name → regular expression.
        deny_list: terms always masked (label ``[REDACTED]``), whatever ``oov``; matched on
            their NFKC case-folded keys (:mod:`textdp.text.deny`).
        phone_regions: regions whose national phone formats count (default
            :data:`textdp.text.identifiers.DEFAULT_PHONE_REGIONS`).
        entities: people, locations, organisations and street addresses replaced by their labels
            (``[PERSON]``, ``[LOCATION]``, ``[ORG]``, ``[ADDRESS]``) before the mechanism
            (:mod:`textdp.text.entities`): ``"default"`` (all four), ``"none"`` (off: the report
            warns that names and places may pass through), kinds such as ``"person,location"``
            or a list of them, or an :class:`textdp.text.entities.Entities`. Removed under
            ``oov="drop"``, labelled under every other policy.
        allow_list: public terms (product names, your own company) released as they are,
            unprotected and counted, whatever the entities and the mechanism.
        allocation: split a document budget over its privatised words
            (:class:`textdp.allocation.Allocation`); the mechanism then fixes every parameter
            but ε.
    """

    def __init__(self, mechanism: WordMechanism, *, oov: str = "mask",
                 mask_token: str = DEFAULT_MASK, keep_stopwords: bool = False,
                 seed: int | None = None,
                 unchanged_warning: float = DEFAULT_UNCHANGED_WARNING,
                 batch_chars: int = DEFAULT_BATCH_CHARS, identifiers: bool | Identifiers = True,
                 identifier_labels: Mapping[str, str] | None = None,
                 identifier_patterns: Mapping[str, str] | None = None,
                 deny_list: Iterable[str] | None = None,
                 allocation: Allocation | None = None,
                 phone_regions: Sequence[str] | None = None,
                 entities: str | Sequence[str] | bool | Entities | None = "default",
                 allow_list: Iterable[str] | None = None) -> None:
        if not isinstance(mechanism, WordMechanism):
            raise TypeError("mechanism must be a textdp word mechanism")
        if not isinstance(mask_token, str):
            raise TypeError("mask_token must be a string")
        if isinstance(batch_chars, bool) or not isinstance(batch_chars, int) or batch_chars < 1:
            raise ValueError(f"batch_chars must be a positive integer, got {batch_chars!r}")
        self.batch_chars = batch_chars
        self.mechanism = mechanism
        self.oov = _check_oov(oov)
        self.mask_token = mask_token
        # CusText+ keeps its stop words by design: they never reach it and are counted as kept.
        own_stopwords = (frozenset(mechanism.stopwords) if getattr(mechanism, "keeps_stopwords", False)
                         else frozenset())
        self.keep_stopwords = bool(keep_stopwords) or bool(own_stopwords)
        self.seed = check_seed(seed)
        self.unchanged_warning = check_probability(unchanged_warning, "unchanged_warning",
                                                   open_low=False, open_high=False)
        self._rng = _random.secure_generator() if self.seed is None else None
        self._doc_generators = (_random.DocumentGenerators(self.seed)
                                if self.seed is not None else None)
        # (document position, generator state) of a document whose next segment continues it.
        self._carry: tuple[int, dict[str, Any]] | None = None
        self._carry_generator: np.random.Generator | None = None  # receives a carried state
        vocab = mechanism.vocabulary
        self._lookup = vocab.lookup
        self._words = vocab.words_array
        self._stop_ids = (
            np.array(sorted(vocab.lookup[w] for w in
                            (ENGLISH_STOPWORDS if keep_stopwords else frozenset()) | own_stopwords
                            if w in vocab.lookup))
            if self.keep_stopwords else None
        )
        self._table = _code_table(vocab)
        self.identifiers = make_identifiers(identifiers, identifier_labels, identifier_patterns,
                                            deny_list, phone_regions)
        # Entities (textdp.text.entities) ride on the identifier spans: kinds after the
        # identifiers' own, so the identifier kind indices (DENIED first) are unchanged.
        self.entities = make_entities(entities, allow_list)
        self._spans: Identifiers | Recognisers | None = (
            Recognisers(self.identifiers, self.entities) if self.entities.active
            else self.identifiers)
        self._n_identifier_kinds = len(self.identifiers.kinds) if self.identifiers is not None else 0
        kinds = self._spans.kinds if self._spans is not None else ()
        labels = [mask_token, *(self._spans.label(k) for k in kinds)]
        codes = [np.frombuffer(t.encode("utf-32-le", "surrogatepass"), dtype=np.uint32) for t in labels]
        lengths = np.array([c.size for c in codes], dtype=np.int64)
        offsets = self._table.pool.size + np.cumsum(lengths) - lengths
        self._mask_off, self._mask_len = int(offsets[0]), int(lengths[0])
        self._label_off, self._label_len = offsets[1:], lengths[1:]  # by identifier kind
        self._static = np.concatenate([self._table.pool, *codes])
        self._buffer = self._static
        self._tally = TallyCounter(len(vocab), kinds)
        self._batch_privatized = np.zeros(0, dtype=np.int64)  # per document of the last step
        self._next_position = 0
        # Budget allocation (textdp.allocation): per-token ε levels, one mechanism per level.
        self._allocator = Allocator(allocation, mechanism) if allocation is not None else None

    # ----------------------------------------------------------------------------------------
    def run(self, texts: Sequence[str], start: int | None = None) -> list[str]:
        """Privatise one batch. ``start`` is the corpus position of ``texts[0]`` (default: after
        the previous batch); it selects the per-document generators of a seeded run."""
        t0 = time.perf_counter_ns()
        if isinstance(texts, str):
            raise TypeError("texts must be a sequence of strings, not a single string")
        texts = list(texts)
        if set(map(type, texts)) - {str}:  # C-level screen; the loop names the culprit
            for i, t in enumerate(texts):
                if not isinstance(t, str):
                    raise TypeError(f"document {i} is {type(t).__name__}, expected str")
        if start is None:
            start = self._next_position
        self._next_position = start + len(texts)
        if not texts:
            return []
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        self._carry = None  # a document never spans two calls
        if lengths.max() > SEGMENT_CHARS and self._allocator is not None:
            raise ValueError(f"budget allocation needs whole documents: a document of "
                             f"{int(lengths.max())} characters exceeds {SEGMENT_CHARS}")
        if lengths.max() > SEGMENT_CHARS:
            result, counts = self._run_segmented(texts, lengths.tolist(), start)
        else:
            result, counts = self._run_grouped(texts, lengths, start)
        tally = self._tally
        tally.max_privatized = max(tally.max_privatized, int(counts.max(initial=0)))
        tally.documents += len(texts)
        tally.empty_documents += texts.count("")
        tally.nanoseconds += time.perf_counter_ns() - t0
        return result

    def _run_grouped(self, texts: list[str], lengths: np.ndarray,
                     start: int) -> tuple[list[str], np.ndarray]:
        """Documents no longer than a segment, in groups of about ``batch_chars`` characters
        (cut where the running total crosses a multiple of it: at most one document more), each
        group one vectorised step; no Python work per document. Documents are never cut here, so
        each draws from its own generator whatever the grouping."""
        before = np.cumsum(lengths) - lengths
        cuts = np.flatnonzero(np.diff(before // self.batch_chars)) + 1
        bounds = [0, *cuts.tolist(), len(texts)]
        result: list[str] = []
        counts = []
        for a, b in zip(bounds[:-1], bounds[1:], strict=True):
            group = texts[a:b]
            result += self._run_codes(group, encode_batch(group, self._spans),
                                      _Layout.whole(start + a, b - a))
            counts.append(self._batch_privatized)
        return result, np.concatenate(counts)

    def _run_segmented(self, texts: list[str], lengths: list[int],
                       start: int) -> tuple[list[str], np.ndarray]:
        """Groups of at most ``batch_chars`` characters (or one segment), long documents cut
        into segments made lazily and joined as soon as their last segment is out."""
        result: list[str] = []
        pending: list[str] = []
        counts = np.zeros(len(texts), dtype=np.int64)

        def flush(group: list[str], rows: list[tuple[int, int, bool]]) -> None:
            layout = _Layout.of(start, rows)
            spans = None
            if self._spans is not None:  # found on whole documents: see below
                base = np.cumsum([0, *map(len, group)])
                spans = tuple(np.concatenate([np.asarray(p[c], dtype=np.int64) + (base[j] if c < 2 else 0)
                                              for j, p in enumerate(group_spans)])
                              for c in range(3))
            out = self._run_codes(group, encode_batch(group, spans=spans), layout)
            np.add.at(counts, layout.owner, self._batch_privatized)
            for piece, (_, _, last) in zip(out, rows, strict=True):
                pending.append(piece)
                if last:
                    result.append(pending[0] if len(pending) == 1 else "".join(pending))
                    pending.clear()

        group: list[str] = []
        group_spans: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # per piece, its own offsets
        rows: list[tuple[int, int, bool]] = []  # (document, segment, last segment?)
        size = 0
        for i, text in enumerate(texts):
            # Identifiers and deny-list terms of the whole document (a function of it alone),
            # before it is cut: no cut lands inside one, so a term straddling a segment
            # boundary is still found.
            doc_spans = self._spans.spans(text) if self._spans is not None else None
            segments = (_segments(text, doc_spans) if lengths[i] > SEGMENT_CHARS
                        else iter((text,)))
            seg = next(segments)
            j = offset = 0
            while seg is not None:
                following = next(segments, None)
                if group and size + len(seg) > self.batch_chars:
                    flush(group, rows)
                    group, group_spans, rows, size = [], [], [], 0
                group.append(seg)
                if doc_spans is not None:
                    inside = (doc_spans[0] >= offset) & (doc_spans[1] <= offset + len(seg))
                    group_spans.append((doc_spans[0][inside] - offset,
                                        doc_spans[1][inside] - offset, doc_spans[2][inside]))
                rows.append((i, j, following is None))
                size += len(seg)
                offset += len(seg)
                seg, j = following, j + 1
        flush(group, rows)
        return result, counts

    def _run_codes(self, texts: list[str], batch: CodeBatch, layout: _Layout) -> list[str]:
        """Privatise the batch as one code array (see the module docstring)."""
        ids = self._table.find(batch)
        in_vocab = ids >= 0
        private = in_vocab.copy()
        if self._stop_ids is not None:
            stop = in_vocab & np.isin(ids, self._stop_ids)
            private &= ~stop
            self._tally.by_policy["stopwords_kept"] += int(stop.sum())
        if batch.identifiers.size:
            in_vocab[batch.identifiers] = True  # not out-of-vocabulary: the identifier policy
        oov = np.flatnonzero(~in_vocab)
        is_number = batch.is_digit[oov]
        priv_pos = np.flatnonzero(private)
        doc_of = batch.doc_of

        need_random_oov = self.oov is OOVPolicy.RANDOM and oov.size > 0
        levels = (None if self._allocator is None
                  else self._allocator.levels(ids[priv_pos], doc_of[priv_pos], len(texts)))
        noise, random_oov = self._draw(ids[priv_pos], doc_of[priv_pos],
                                       doc_of[oov] if need_random_oov else None, layout,
                                       len(texts), levels)
        new_ids = (self._allocator or self.mechanism).apply(ids[priv_pos], noise)

        # Where each output token comes from: the original text (kept tokens), a pre-encoded
        # vocabulary word in the right case, the mask, or a per-batch extra (mixed case).
        static = self._static.size
        src = batch.starts + static
        length = batch.ends - batch.starts
        extra: list[str] = []
        # A word the mechanism returned unchanged keeps the input's bytes (ｈｅｌｌｏ, NFD).
        changed = np.flatnonzero(new_ids != ids[priv_pos])
        self._place_words(batch, priv_pos[changed], new_ids[changed], src, length, extra)
        self._place_identifiers(batch.identifiers, batch.identifier_kinds, src, length)
        if oov.size and self.oov is not OOVPolicy.KEEP:
            if self.oov is OOVPolicy.MASK:
                src[oov] = self._mask_off
                length[oov] = self._mask_len
            elif self.oov is OOVPolicy.DROP:
                length[oov] = 0
            else:
                self._place_words(batch, oov, random_oov, src, length, extra)
        if extra:
            # Extras follow the codes in the buffer; _place_words stored their offsets negated.
            extra_codes = np.frombuffer("".join(extra).encode("utf-32-le", "surrogatepass"),
                                        dtype=np.uint32)
            neg = src < 0
            src[neg] = -src[neg] - 1 + static + batch.codes.size
        else:
            extra_codes = np.empty(0, dtype=np.uint32)
        source = self._source(batch.codes, extra_codes)
        result = batch.assemble(source, static, src, length)

        structure = {TokenClass.WHITESPACE: batch.whitespace,
                     TokenClass.PUNCTUATION: batch.punctuation, TokenClass.OTHER: batch.other}
        self._account(ids, new_ids, priv_pos, oov, is_number, doc_of, len(texts), structure,
                      batch.identifier_kinds)
        return result

    def _place_identifiers(self, tokens: np.ndarray, kinds: np.ndarray, src: np.ndarray,
                           length: np.ndarray) -> None:
        """Point identifier ``tokens`` at their kinds' labels, or keep or drop them (see OOVPolicy)."""
        if not tokens.size:
            return
        if len(self._label_off) > self._n_identifier_kinds:  # entities and allow-list terms
            tokens, kinds = self._place_entities(tokens, kinds, src, length)
            if not tokens.size:
                return
        if self.oov in (OOVPolicy.KEEP, OOVPolicy.DROP):
            denied = kinds == self.identifiers.kinds.index(DENIED)  # masked under every policy
            if self.oov is OOVPolicy.DROP:
                length[tokens[~denied]] = 0
            tokens, kinds = tokens[denied], kinds[denied]
        src[tokens] = self._label_off.take(kinds)
        length[tokens] = self._label_len.take(kinds)

    def _place_entities(self, tokens: np.ndarray, kinds: np.ndarray, src: np.ndarray,
                        length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Entity tokens get their labels (removed under ``oov="drop"``), allow-list terms keep
        their text; returns the identifier tokens left to place."""
        entity = kinds >= self._n_identifier_kinds
        allowed = kinds == len(self._label_off) - 1  # ALLOWED is the last kind
        labelled = entity & ~allowed
        if self.oov is OOVPolicy.DROP:
            length[tokens[labelled]] = 0
        else:
            src[tokens[labelled]] = self._label_off.take(kinds[labelled])
            length[tokens[labelled]] = self._label_len.take(kinds[labelled])
        return tokens[~entity], kinds[~entity]

    def _source(self, codes: np.ndarray, extra: np.ndarray) -> np.ndarray:
        """[vocabulary pools, mask, identifier labels, codes, extra] in one reused buffer."""
        static = self._static.size
        need = static + codes.size + extra.size
        if self._buffer.size < need or self._buffer is self._static:
            self._buffer = np.empty(max(need, 2 * self._buffer.size), dtype=np.uint32)
            self._buffer[:static] = self._static
        self._buffer[static:static + codes.size] = codes
        self._buffer[static + codes.size:need] = extra
        return self._buffer[:need]

    def _place_words(self, batch: CodeBatch, tokens: np.ndarray, word_ids: np.ndarray,
                     src: np.ndarray, length: np.ndarray, extra: list[str]) -> None:
        """Point ``tokens`` at vocabulary words ``word_ids`` in the case pattern of each token."""
        if tokens.size == 0:
            return
        pattern = batch.case_patterns(tokens)
        table = self._table
        flat = np.minimum(pattern, UPPER).astype(np.int64)
        flat *= table.pool_off.shape[1]
        flat += word_ids
        src[tokens] = table.pool_off.ravel().take(flat)
        length[tokens] = table.pool_len.ravel().take(flat)
        mixed = np.flatnonzero(pattern == MIXED)
        if mixed.size:
            words = table.words
            offset = sum(map(len, extra))
            for i in mixed.tolist():
                t = int(tokens[i])
                rep = restore_case(words[int(word_ids[i])], batch.token(t))
                src[t] = -(offset + 1)  # resolved once the extras are encoded
                length[t] = len(rep)
                offset += len(rep)
                extra.append(rep)

    def _account(self, ids: np.ndarray, new_ids: np.ndarray, priv_pos: np.ndarray,
                 oov: np.ndarray, is_number: np.ndarray, doc_of: np.ndarray, n_docs: int,
                 structure: dict[TokenClass, int], identifier_kinds: np.ndarray) -> None:
        tally = self._tally
        counts, classes = tally.by_policy, tally.by_class
        counts["privatized"] += int(priv_pos.size)
        tally.word_counts += np.bincount(ids[priv_pos], minlength=tally.word_counts.size)
        counts["privatized_unchanged"] += int((new_ids == ids[priv_pos]).sum())
        n_numbers = int(is_number.sum())
        n_oov_words = int(oov.size - n_numbers)
        verb = {OOVPolicy.MASK: "masked", OOVPolicy.KEEP: "kept", OOVPolicy.DROP: "dropped",
                OOVPolicy.RANDOM: "randomized"}[self.oov]
        counts[f"oov_words_{verb}"] += n_oov_words
        counts[f"numbers_{verb}"] += n_numbers
        classes[TokenClass.WORD] += ids.size - n_numbers - identifier_kinds.size
        classes[TokenClass.NUMBER] += n_numbers
        classes[TokenClass.IDENTIFIER] += identifier_kinds.size
        if identifier_kinds.size:
            self._account_identifiers(identifier_kinds)
        for k, v in structure.items():
            classes[k] += v
        self._batch_privatized = np.bincount(doc_of[priv_pos], minlength=n_docs)

    def _account_identifiers(self, kinds: np.ndarray) -> None:
        tally = self._tally
        per_kind = np.bincount(kinds, minlength=len(tally.by_kind))
        tally.add_kinds(per_kind)
        counts = tally.by_policy
        n_id = self._n_identifier_kinds
        if len(tally.by_kind) > n_id:  # entities, then allow-list terms (the last kind)
            verb = "dropped" if self.oov is OOVPolicy.DROP else "masked"
            counts[f"entities_{verb}"] += int(per_kind[n_id:-1].sum())
            counts["allowed_kept"] += int(per_kind[-1])
        if not n_id:
            return
        denied = int(per_kind[self.identifiers.kinds.index(DENIED)])
        verb = {OOVPolicy.KEEP: "kept", OOVPolicy.DROP: "dropped"}.get(self.oov, "masked")
        counts["identifiers_masked"] += denied
        counts[f"identifiers_{verb}"] += int(per_kind[:n_id].sum()) - denied

    def _draw_ids(self, ids: np.ndarray, rng: np.random.Generator,
                  levels: np.ndarray | None) -> Any:
        if levels is None:
            return self.mechanism.draw(ids, rng)
        return self._allocator.draw(ids, rng, levels)

    def _draw(self, ids: np.ndarray, docs: np.ndarray, oov_docs: np.ndarray | None,
              layout: _Layout, n_docs: int,
              levels: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        """Mechanism noise for ``ids`` and, when needed, random words for OOV tokens."""
        v = len(self.mechanism.vocabulary)
        if self.seed is None:
            noise = self._draw_ids(ids, self._rng, levels)
            rand = self._rng.integers(v, size=oov_docs.size) if oov_docs is not None else None
            return noise, rand
        # Seeded: document i draws from its own generator, mechanism noise first, then OOV words;
        # the segments of a long document each do so in turn, continuing the same stream.
        bounds = np.searchsorted(docs, np.arange(n_docs + 1))
        if oov_docs is not None:
            oov_bounds = np.searchsorted(oov_docs, np.arange(n_docs + 1))
            active = np.flatnonzero((np.diff(bounds) > 0) | (np.diff(oov_bounds) > 0))
        else:
            active = np.flatnonzero(np.diff(bounds) > 0)
        parts, rand_parts = [], []
        fresh = self._doc_generators.many(layout.position[active[~layout.continued[active]]])
        for d in active.tolist():
            g = self._continued(int(layout.position[d])) if layout.continued[d] else next(fresh)
            parts.append(self._draw_ids(ids[bounds[d]:bounds[d + 1]], g,
                                        None if levels is None else levels[bounds[d]:bounds[d + 1]]))
            if oov_docs is not None:
                rand_parts.append(g.integers(v, size=int(oov_bounds[d + 1] - oov_bounds[d])))
            if layout.continues[d]:
                self._carry = (int(layout.position[d]), g.bit_generator.state)
        if not parts:
            parts = [self._draw_ids(ids[:0], _random.secure_generator(),
                                    None if levels is None else levels[:0])]  # draws nothing
        noise = (self._allocator or self.mechanism).concat_noise(parts)
        rand = np.concatenate(rand_parts) if oov_docs is not None else None
        return noise, rand

    def _continued(self, position: int) -> np.random.Generator:
        """The generator of a later segment of document ``position``: where the previous one
        left it, or fresh when no earlier segment drew anything."""
        if self._carry is None or self._carry[0] != position:
            return _random.document_generator(self.seed, position)
        if self._carry_generator is None:
            self._carry_generator = _random.seeded_generator(self.seed)
        self._carry_generator.bit_generator.state = self._carry[1]
        return self._carry_generator

    # ----------------------------------------------------------------------------------------
    @property
    def allocation(self) -> Allocation | None:
        """The budget allocation this Privatizer runs with (None: one ε for every word)."""
        return self._allocator.allocation if self._allocator is not None else None

    def tallies(self) -> Tallies:
        """Everything this Privatizer counted so far (:class:`textdp.tallies.Tallies`): a run
        split over processes sends each part's tallies (or the difference of two snapshots)
        home, where their sum gives one report (:meth:`report`)."""
        return self._tally.snapshot(self._allocator)

    def report(self, tallies: Tallies | None = None, *,
               sections: Mapping[str, Any] | None = None, **context: Any) -> Report:
        """The privacy report of ``tallies`` (default: everything this Privatizer ran), built
        once (:func:`textdp.privacy.report.word_report`). ``sections`` (a front's own, such as
        ``pandas``) and ``context`` (``engine``, ``workers``, ``wall_seconds``, ``ledger``,
        ``io``, …: :class:`textdp.privacy.report.ReportContext`) say where it ran."""
        from textdp.privacy.report import ReportContext, word_report

        if tallies is None:
            tallies = self.tallies()
        allocation = (self._allocator.measurement(tallies) if self._allocator is not None
                      else None)
        return word_report(
            self.mechanism, tallies,
            policy={"oov": self.oov.value, "mask_token": self.mask_token,
                    "keep_stopwords": self.keep_stopwords},
            seed=self.seed, unchanged_threshold=self.unchanged_warning,
            sections=self._sections(tallies), allocation=allocation,
            context=ReportContext(sections=tuple((sections or {}).items()), **context))

    def _sections(self, tallies: Tallies) -> list[Section]:
        """The token policy's report sections: identifiers (when recognised) and entities."""
        from textdp.privacy.report import Section

        counts = tallies.by_policy
        out = []
        if self.identifiers is not None:
            by_kind = {k: tallies.by_kind.get(k, 0) for k in self.identifiers.kinds}
            body = {**self.identifiers.describe(), "by_kind": by_kind,
                    "masked": counts.get("identifiers_masked", 0),
                    "kept": counts.get("identifiers_kept", 0),
                    "dropped": counts.get("identifiers_dropped", 0)}
            unprotected, warnings = [], []
            if self.oov is OOVPolicy.KEEP and body["kept"]:
                kept = {k: n for k, n in by_kind.items() if n and k != DENIED}
                unprotected.append({"kind": "identifiers", "count": body["kept"],
                                    "by_kind": kept, "why": "oov=keep releases them unchanged"})
                warnings.append(f"released unprotected by oov=keep: {body['kept']} "
                                "identifier(s) (" + ", ".join(f"{n} {k}" for k, n in kept.items())
                                + ")")
            out.append(Section("identifiers", body, tuple(unprotected), tuple(warnings)))
        e = self.entities
        allowed = counts.get("allowed_kept", 0)
        body = {"enabled": bool(e.kinds), **e.describe(),
                "by_kind": {k: tallies.by_kind.get(k, 0) for k in e.kinds},
                "masked": counts.get("entities_masked", 0),
                "dropped": counts.get("entities_dropped", 0), "allowed_kept": allowed}
        unprotected = ([{"kind": "allow-list terms", "count": allowed,
                         "why": "allow_list releases them unchanged"}] if allowed else [])
        if not e.kinds:
            warnings = [OFF_WARNING]
        elif len(e.kinds) < len(ENTITY_KINDS):
            off = [k for k in ENTITY_KINDS if k not in e.kinds]
            warnings = [f"entity recognition is off for: {', '.join(off)} "
                        "(they may pass through)"]
        else:
            warnings = []
        out.append(Section("entities", body, tuple(unprotected), tuple(warnings)))
        return out


@dataclass(frozen=True, slots=True)
class _Layout:
    """Where the pieces of a batch come from: per piece, its document's corpus ``position``,
    whether it ``continued`` an earlier segment of that document, and whether it ``continues``
    in a later one; ``owner`` is the document's index in the call to :meth:`Privatizer.run`."""

    position: np.ndarray
    continued: np.ndarray
    continues: np.ndarray
    owner: np.ndarray

    @classmethod
    def whole(cls, start: int, n: int) -> _Layout:
        no = np.zeros(n, dtype=bool)
        return cls(np.arange(start, start + n, dtype=np.int64), no, no, np.arange(n))

    @classmethod
    def of(cls, start: int, rows: list[tuple[int, int, bool]]) -> _Layout:
        owner, index, last = (np.array(c) for c in zip(*rows, strict=True))
        owner = owner.astype(np.int64)
        return cls(owner + start, index > 0, ~last.astype(bool), owner)


def _segments(text: str, spans: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
              ) -> Iterator[str]:
    """``text`` cut after each multiple of :data:`SEGMENT_CHARS` at the first place where
    whitespace is followed by a non-space (tokens are never split there), else, with no such
    place within one more segment length, before the next character that is not a combining
    mark or format character. A cut never lands inside one of ``spans`` (the document's
    identifier spans: starts, ends, kinds): it moves to the first such place after the span."""
    starts, ends = (spans[0], spans[1]) if spans is not None else (np.empty(0, np.int64),) * 2
    a = 0
    while len(text) - a > SEGMENT_CHARS:
        low = a + SEGMENT_CHARS
        while True:
            m = _BREAK.search(text, low, low + SEGMENT_CHARS)
            if m is not None:
                cut = m.end()
            else:
                cut = low
                while cut < len(text) and unicodedata.category(text[cut]) in _INSIDE:
                    cut += 1
            k = int(np.searchsorted(starts, cut)) - 1  # the last span starting before the cut
            if k < 0 or ends[k] <= cut:
                break
            low = int(ends[k])
        if cut >= len(text):
            break
        yield text[a:cut]
        a = cut
    yield text[a:]


def make_identifiers(identifiers: bool | Identifiers, labels: Mapping[str, str] | None,
                     patterns: Mapping[str, str] | None,
                     deny_list: Iterable[str] | None,
                     phone_regions: Sequence[str] | None = None) -> Identifiers | None:
    """The recogniser the options describe (None: no identifiers and no deny-list)."""
    if isinstance(identifiers, Identifiers):
        if labels or patterns or deny_list or phone_regions:
            raise ValueError("pass labels, patterns, the deny-list and phone regions to the "
                             "Identifiers object")
        return identifiers
    if not isinstance(identifiers, bool):
        raise TypeError("identifiers must be True, False or a textdp.text.identifiers.Identifiers")
    if isinstance(deny_list, str):
        raise TypeError("deny_list must be a list of terms, not a single string")
    deny = list(deny_list or ())
    if phone_regions is not None and not identifiers:
        raise ValueError("phone regions given, but identifiers are off")
    if not (identifiers or patterns or deny):
        if labels:
            raise ValueError("identifier labels given, but identifiers are off")
        return None
    regions = {} if phone_regions is None else {"phone_regions": phone_regions}
    return Identifiers(builtin=identifiers, patterns=dict(patterns or {}),
                       labels=dict(labels or {}), deny_list=deny, **regions)


def make_entities(entities: str | Sequence[str] | bool | Entities | None,
                  allow_list: Iterable[str] | None) -> Entities:
    """The entity recogniser the options describe (its ``kinds`` empty when off)."""
    if isinstance(entities, Entities):
        if allow_list:
            raise ValueError("pass the allow-list to the Entities object")
        return entities
    if isinstance(allow_list, str):
        raise TypeError("allow_list must be a list of terms, not a single string")
    return Entities(kinds=entities, allow_list=tuple(allow_list or ()))


@dataclass(frozen=True, slots=True)
class PrivatizeResult:
    texts: list[str]
    report: Report


def build_mechanism(mechanism: str | WordMechanism, epsilon: float | None,
                    vocabulary: Vocabulary | None, params: dict[str, Any]) -> WordMechanism:
    if isinstance(mechanism, WordMechanism):
        if epsilon is not None or params or vocabulary is not None:
            raise ValueError("pass parameters to the mechanism object, not to privatize()")
        return mechanism
    if epsilon is None:
        raise ValueError("epsilon is required")
    return create(mechanism, vocabulary, epsilon=epsilon, **params)


def privatize(texts: Iterable[str], mechanism: str | WordMechanism = "mvc",
              epsilon: float | None = None, *, seed: int | None = None, oov: str = "mask",
              mask_token: str = DEFAULT_MASK, keep_stopwords: bool = False,
              vocabulary: Vocabulary | None = None, batch_size: int = 4096,
              unchanged_warning: float = DEFAULT_UNCHANGED_WARNING,
              batch_chars: int = DEFAULT_BATCH_CHARS,
              identifiers: bool | Identifiers = True,
              identifier_labels: Mapping[str, str] | None = None,
              identifier_patterns: Mapping[str, str] | None = None,
              deny_list: Iterable[str] | None = None, ledger: Any = None,
              ledger_policy: str = "warn", budget: float | None = None,
              allocation: str | Allocation | None = None, epsilon_document: float | None = None,
              epsilon_floor: float | None = None, epsilon_ceiling: float | None = None,
              phone_regions: Sequence[str] | None = None,
              entities: str | Sequence[str] | bool | Entities | None = "default",
              allow_list: Iterable[str] | None = None,
              **params: Any) -> PrivatizeResult:
    """Privatise ``texts`` word by word and report the guarantee.

    Args:
        texts: documents (strings).
        mechanism: a name from :func:`textdp.mechanisms.available` or a built mechanism.
        epsilon: privacy parameter (per unit of the mechanism's metric).
        seed: None (OS entropy, for production) or an integer (reproducible; flagged).
        oov: policy for out-of-vocabulary words, numbers and identifiers: mask, keep, drop,
            random (see :class:`OOVPolicy`).
        identifiers, identifier_labels, identifier_patterns, deny_list, phone_regions: see
            :class:`Privatizer`.
        entities, allow_list: people, locations, organisations and street addresses replaced by
            labels before the mechanism (on by default; ``"none"`` turns it off), and public
            terms released as they are: see :class:`Privatizer`.
        unchanged_warning: warn in the report when the expected fraction of privatised words
            returned unchanged exceeds it (default 0.5).
        batch_size, batch_chars: documents and characters per vectorised step (memory vs.
            speed; never the output of a seeded run).
        ledger, ledger_policy, budget: a privacy ledger (a path or a :class:`textdp.ledger.Ledger`),
            its policy (``warn`` or ``refuse``) and ε budget per input: the report gains
            ``ledger`` (earlier releases of these texts, cumulative guarantee), ``refuse`` raises
            :class:`textdp.ledger.LedgerRefused` before privatising when the budget would be
            exceeded, and the release is appended once it succeeded (docs/accounting.md).
        allocation: a budget-allocation rule (``uniform``, ``position``, ``frequency``) or an
            :class:`textdp.allocation.Allocation`; with a rule name, ``epsilon_document`` (and
            optionally ``epsilon_floor``, ``epsilon_ceiling``) replace ``epsilon``
            (docs/allocation.md).
        **params: further mechanism parameters.

    Returns:
        ``.texts`` (one output per input, in order) and ``.report`` (a JSON-ready dict).
    """
    from textdp.ledger import as_ledger

    book = as_ledger(ledger, ledger_policy, budget)
    allocation, epsilon = resolve_allocation(allocation, epsilon, epsilon_document, epsilon_floor,
                                             epsilon_ceiling, mechanism)
    mech = build_mechanism(mechanism, epsilon, vocabulary, params)
    if isinstance(texts, str):
        raise TypeError("texts must be a list of strings, not a single string")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    runner = Privatizer(mech, oov=oov, mask_token=mask_token, keep_stopwords=keep_stopwords,
                        seed=seed, unchanged_warning=unchanged_warning, batch_chars=batch_chars,
                        identifiers=identifiers, identifier_labels=identifier_labels,
                        identifier_patterns=identifier_patterns, deny_list=deny_list,
                        allocation=allocation, phone_regions=phone_regions,
                        entities=entities, allow_list=allow_list)
    texts = list(texts)
    if book is None:
        return PrivatizeResult(_run_all(runner, texts, batch_size), runner.report())
    from textdp.privacy.fingerprint import fingerprint_texts

    fingerprint, count = fingerprint_texts(texts)
    with book.release(mechanism=mech, input_fingerprint=fingerprint, records=count,
                      seed=seed) as release:
        out = _run_all(runner, texts, batch_size)
        report = runner.report(ledger=release)
    return PrivatizeResult(out, report)


def _run_all(runner: Privatizer, texts: list[str], batch_size: int) -> list[str]:
    out: list[str] = []
    for s in range(0, len(texts), batch_size):
        out.extend(runner.run(texts[s:s + batch_size]))
    return out
