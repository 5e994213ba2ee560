"""Text in, text out: token policy, per-document randomness, case restoration and the report.

:class:`Privatizer` joins three parts a reader can name: the token policy
(:class:`textdp.token_policy.TokenRules`: what each token class becomes and how the report
states it), the document streams (:class:`textdp.streams.DocumentStreams`: the per-document
generators and the state a long document's segments carry) and the tallies
(:class:`textdp.tallies.TallyCounter`, frozen as :class:`textdp.tallies.Tallies`). The report
is built once from the tallies (:meth:`Privatizer.report`).

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
from typing import TYPE_CHECKING, Any

import numpy as np

from textdp._checks import check_probability, check_seed, check_texts
from textdp.allocation import Allocation, Allocator
from textdp.mechanisms import WordMechanism, create
from textdp.privacy.unchanged import DEFAULT_UNCHANGED_WARNING
from textdp.streams import DocumentStreams, Layout
from textdp.tallies import Tallies, TallyCounter
from textdp.text import TokenClass, restore_case
from textdp.text._codes import MIXED, UPPER, CodeBatch, CodeTable, encode_batch
from textdp.text.entities import Entities
from textdp.text.identifiers import Identifiers
from textdp.token_policy import OOVPolicy, TokenRules, make_entities, make_identifiers
from textdp.vocab import Vocabulary

if TYPE_CHECKING:
    from textdp.privacy.report import Report

__all__ = ["OOVPolicy", "Privatizer", "DEFAULT_MASK", "build_mechanism", "make_identifiers",
           "make_entities"]

DEFAULT_MASK = "[MASK]"

#: A document longer than this (characters) is privatised in segments cut at canonical places:
#: the first whitespace-to-text boundary at or after each multiple of it (module ``_segments``).
#: The segments of a document draw, in order, from that document's one generator, so a seeded
#: run's output does not depend on how documents are grouped into batches.
SEGMENT_CHARS = 1 << 16
#: Default bound on the characters privatised in one vectorised step (memory ~ tokens, not
#: documents: a 30 MB line is privatised 256 Ki characters at a time).
DEFAULT_BATCH_CHARS = 1 << 18
#: Documents per call to :meth:`Privatizer.run` in :func:`privatize` (never the output of a
#: seeded run).
DEFAULT_BATCH_SIZE = 4096

_BREAK = re.compile(r"\s(?=\S)")
_INSIDE = frozenset({"Mn", "Mc", "Me", "Cf"})  # a hard cut never lands before one of these


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
            their folded keys (:mod:`textdp.text.deny`, :mod:`textdp.text.fold`).
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
        self._setup(mechanism, seed=check_seed(seed), batch_chars=batch_chars,
                    unchanged_warning=check_probability(unchanged_warning, "unchanged_warning",
                                                        open_low=False, open_high=False),
                    allocation=allocation, policy=dict(
                        oov=oov, mask_token=mask_token, keep_stopwords=keep_stopwords,
                        identifiers=identifiers, identifier_labels=identifier_labels,
                        identifier_patterns=identifier_patterns, deny_list=deny_list,
                        phone_regions=phone_regions, entities=entities, allow_list=allow_list))

    @classmethod
    def of(cls, spec: Any) -> Privatizer:
        """The Privatizer of a release spec (:class:`textdp.spec.WordSpec`), which checked every
        option when it was built: nothing is checked again here."""
        self = cls.__new__(cls)
        self._setup(spec.mechanism_object(), seed=spec.seed, batch_chars=spec.batch_chars,
                    unchanged_warning=spec.unchanged_warning, allocation=spec.allocation,
                    policy=spec.policy.options())
        return self

    def _setup(self, mechanism: WordMechanism, *, seed: int | None, batch_chars: int,
               unchanged_warning: float, allocation: Allocation | None,
               policy: dict[str, Any]) -> None:
        self.batch_chars = batch_chars
        self.mechanism = mechanism
        self.unchanged_warning = unchanged_warning
        vocab = mechanism.vocabulary
        self._lookup = vocab.lookup
        self._words = vocab.words_array
        self._table = _code_table(vocab)
        # The three parts: what each token becomes (token policy), where each document's
        # randomness comes from (document streams), and what the run counted (tallies).
        # CusText+ keeps its stop words by design: they never reach it and are counted as kept.
        own_stopwords = (frozenset(mechanism.stopwords) if getattr(mechanism, "keeps_stopwords", False)
                         else frozenset())
        self.rules = TokenRules(vocab, self._table, own_stopwords=own_stopwords, **policy)
        self.streams = DocumentStreams(seed)
        self._tally = TallyCounter(len(vocab), self.rules.kinds)
        self._buffer = self.rules.static
        self._batch_privatized = np.zeros(0, dtype=np.int64)  # per document of the last step
        self._next_position = 0
        # Budget allocation (textdp.allocation): per-token ε levels, one mechanism per level.
        self._allocator = Allocator(allocation, mechanism) if allocation is not None else None

    # ----------------------------------------------------------------------------------------
    def run(self, texts: Sequence[str], start: int | None = None) -> list[str]:
        """Privatise one batch. ``start`` is the corpus position of ``texts[0]`` (default: after
        the previous batch); it selects the per-document generators of a seeded run."""
        t0 = time.perf_counter_ns()
        texts = check_texts(texts)
        if start is None:
            start = self._next_position
        self._next_position = start + len(texts)
        if not texts:
            return []
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        self.streams.new_call()
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
            result += self._run_codes(group, encode_batch(group, self.rules.spans),
                                      Layout.whole(start + a, b - a))
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
            layout = Layout.of(start, rows)
            spans = None
            if self.rules.spans is not None:  # found on whole documents: see below
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
            doc_spans = (self.rules.spans.spans(text) if self.rules.spans is not None
                         else None)
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

    def _run_codes(self, texts: list[str], batch: CodeBatch, layout: Layout) -> list[str]:
        """Privatise the batch as one code array (see the module docstring)."""
        rules = self.rules
        ids = self._table.find(batch)
        in_vocab = ids >= 0
        private = in_vocab.copy()
        if rules.stop_ids is not None:
            stop = in_vocab & np.isin(ids, rules.stop_ids)
            private &= ~stop
            self._tally.by_policy["stopwords_kept"] += int(stop.sum())
        if batch.clitics:  # 's, n't, 're, …: kept with their apostrophe (text._codes)
            self._tally.by_policy["clitics_kept"] += batch.clitics
        if batch.identifiers.size:
            in_vocab[batch.identifiers] = True  # not out-of-vocabulary: the identifier policy
        oov = np.flatnonzero(~in_vocab)
        is_number = batch.is_digit[oov]
        priv_pos = np.flatnonzero(private)
        doc_of = batch.doc_of

        need_random_oov = rules.oov is OOVPolicy.RANDOM and oov.size > 0
        levels = (None if self._allocator is None
                  else self._allocator.levels(ids[priv_pos], doc_of[priv_pos], len(texts)))
        noise, random_oov = self._draw(ids[priv_pos], doc_of[priv_pos],
                                       doc_of[oov] if need_random_oov else None, layout,
                                       len(texts), levels)
        new_ids = (self._allocator or self.mechanism).apply(ids[priv_pos], noise)

        # Where each output token comes from: the original text (kept tokens), a pre-encoded
        # vocabulary word in the right case, the mask, or a per-batch extra (mixed case).
        static = rules.static.size
        src = batch.starts + static
        length = batch.ends - batch.starts
        extra: list[str] = []
        # A word the mechanism returned unchanged keeps the input's bytes (ｈｅｌｌｏ, NFD).
        changed = np.flatnonzero(new_ids != ids[priv_pos])
        self._place_words(batch, priv_pos[changed], new_ids[changed], src, length, extra)
        rules.place_identifiers(batch.identifiers, batch.identifier_kinds, src, length)
        if oov.size and rules.oov is OOVPolicy.RANDOM:
            self._place_words(batch, oov, random_oov, src, length, extra)
        elif oov.size:
            rules.place_oov(oov, src, length)
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

    def _source(self, codes: np.ndarray, extra: np.ndarray) -> np.ndarray:
        """[vocabulary pools, mask, identifier labels, codes, extra] in one reused buffer."""
        head = self.rules.static
        static = head.size
        need = static + codes.size + extra.size
        if self._buffer.size < need or self._buffer is head:
            self._buffer = np.empty(max(need, 2 * self._buffer.size), dtype=np.uint32)
            self._buffer[:static] = head
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
        """Count one batch (tallies), its spans by the token policy's verbs."""
        self._tally.count_batch(ids, ids[priv_pos], new_ids, oov.size, int(is_number.sum()),
                                self.rules.verb, identifier_kinds.size, structure)
        if identifier_kinds.size:
            self.rules.count_spans(self._tally, identifier_kinds)
        self._batch_privatized = np.bincount(doc_of[priv_pos], minlength=n_docs)

    def _draw_ids(self, ids: np.ndarray, rng: np.random.Generator,
                  levels: np.ndarray | None) -> Any:
        if levels is None:
            return self.mechanism.draw(ids, rng)
        return self._allocator.draw(ids, rng, levels)

    def _draw(self, ids: np.ndarray, docs: np.ndarray, oov_docs: np.ndarray | None,
              layout: Layout, n_docs: int,
              levels: np.ndarray | None = None) -> tuple[Any, np.ndarray | None]:
        """Mechanism noise for ``ids`` and, when needed, random words for OOV tokens, from the
        document streams."""
        return self.streams.draw(ids, docs, oov_docs, layout, n_docs,
                                 len(self.mechanism.vocabulary), self._draw_ids,
                                 (self._allocator or self.mechanism).concat_noise, levels)

    # ----------------------------------------------------------------------------------------
    # The token policy's and the streams' settings, read where the Privatizer is rebuilt
    # (Ray actors) or reported.
    @property
    def oov(self) -> OOVPolicy:
        return self.rules.oov

    @property
    def mask_token(self) -> str:
        return self.rules.mask_token

    @property
    def keep_stopwords(self) -> bool:
        return self.rules.keep_stopwords

    @property
    def identifiers(self) -> Identifiers | None:
        return self.rules.identifiers

    @property
    def entities(self) -> Entities:
        return self.rules.entities

    @property
    def seed(self) -> int | None:
        return self.streams.seed

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
        allocation = (self._allocator.for_run(tallies) if self._allocator is not None
                      else None)
        return word_report(
            self.mechanism, tallies,
            policy=self.rules.policy(), seed=self.seed,
            unchanged_threshold=self.unchanged_warning,
            sections=self.rules.sections(tallies), allocation=allocation,
            context=ReportContext(sections=tuple((sections or {}).items()), **context))

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


def build_mechanism(mechanism: str | WordMechanism, epsilon: float | None,
                    vocabulary: Vocabulary | None, params: dict[str, Any]) -> WordMechanism:
    if isinstance(mechanism, WordMechanism):
        if epsilon is not None or params or vocabulary is not None:
            raise ValueError("pass parameters to the mechanism object, not to privatize()")
        return mechanism
    if epsilon is None:
        raise ValueError("epsilon is required")
    return create(mechanism, vocabulary, epsilon=epsilon, **params)
