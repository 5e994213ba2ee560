"""Offline sentence splitting: a document becomes the sequence of sentences SentDP protects.

SentDP (Meehan, Mrini & Chaudhuri, ACL 2022, §2) treats a document as a sequence of sentences
x = (s_1, …, s_k); what counts as "one sentence" is fixed by the splitter, so the splitter is part
of what the guarantee means. The default is ``pysbd`` (rule-based, no model, no download);
``syntok`` is used when pysbd is absent, and a documented regular-expression fallback when
neither is installed. NLTK's punkt is not used: its data cannot be installed offline here.

>>> split_sentences("The food was great. Service was slow! Would I go back? Yes.")
['The food was great.', 'Service was slow!', 'Would I go back?', 'Yes.']
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

__all__ = ["split_sentences", "splitter_name"]

# The fallback: split after ., ! or ? (optionally followed by closing quotes/brackets) when
# whitespace and an upper-case letter, a digit or an opening quote follow. Crude on abbreviations
# ("Dr. Smith"), which is why pysbd is preferred.
_FALLBACK = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


def _regex_split(text: str) -> list[str]:
    return [p.strip() for p in _FALLBACK.split(text) if p.strip()]


@functools.cache
def _backend() -> tuple[str, Callable[[str], list[str]]]:
    try:
        import pysbd

        segmenter = pysbd.Segmenter(language="en", clean=False)
        return "pysbd", lambda text: [s.strip() for s in segmenter.segment(text) if s.strip()]
    except ImportError:
        pass
    try:
        from syntok import segmenter as syntok_segmenter

        def split(text: str) -> list[str]:
            out = []
            for paragraph in syntok_segmenter.process(text):
                for sentence in paragraph:
                    s = "".join(t.spacing + t.value for t in sentence).strip()
                    if s:
                        out.append(s)
            return out

        return "syntok", split
    except ImportError:
        return "regex", _regex_split


def splitter_name() -> str:
    """Which splitter :func:`split_sentences` uses: ``pysbd``, ``syntok`` or ``regex``."""
    return _backend()[0]


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences (stripped, non-empty), offline.

    Lines are split first (a line break always ends a sentence: titles, list items), then each
    line with the splitter named by :func:`splitter_name`.

    Raises:
        TypeError: ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    split = _backend()[1]
    out: list[str] = []
    for line in text.splitlines():
        if line.strip():
            out.extend(split(line))
    return out
