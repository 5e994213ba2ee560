"""What the document-embedding commands share (``docembed``, ``candidates build``, ``recoder train``):
the sentence encoder option and loading the candidate and recoder files as one-line user errors."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from textdp.cli._common import CLIError, one_line, option
from textdp.io import FileError

__all__ = ["EncoderOpt", "SentenceEncoderName", "load_candidates", "load_recoder",
           "sentence_encoder"]


class SentenceEncoderName(StrEnum):
    sbert = "sbert"
    glove_mean = "glove-mean"


EncoderOpt = Annotated[SentenceEncoderName | None, option(
    "--encoder", show_default=False,
    help="Sentence encoder G: sbert (all-MiniLM-L6-v2, 384-d, offline; extra 'sbert') or "
         "glove-mean (mean of the GloVe vectors of a sentence's words, 50-d). Default: the "
         "encoder of the given candidates or recoder, else sbert.")]


def sentence_encoder(name: SentenceEncoderName | str | None, default: str | None = None) -> Any:
    """The encoder named by ``--encoder`` (else ``default``, else sbert), or a one-line error when
    its optional extra is missing."""
    from textdp import encoders

    chosen = str(name.value if isinstance(name, SentenceEncoderName) else name or default or "sbert")
    if chosen not in encoders.ENCODERS:
        raise CLIError(f"unknown sentence encoder {chosen!r} (the candidates name it); choose "
                       f"--encoder {' or '.join(encoders.ENCODERS)}")
    try:
        encoder = encoders.load_sbert() if chosen == "sbert" else encoders.get_encoder(chosen)
        if hasattr(encoder, "model_dir"):
            encoder.model_dir()  # fail now, with the install hint, not after reading the input
    except ImportError as exc:
        raise CLIError(one_line(exc)) from None
    return encoder


def _load(cls: Any, path: Path) -> Any:
    try:
        return cls.load(path)
    except FileNotFoundError:
        raise FileError(path, None, "no such file") from None
    except ValueError as exc:
        raise CLIError(one_line(exc)) from None


def load_candidates(path: Path) -> Any:
    """A :class:`CandidateSet` file, its fingerprint checked."""
    from textdp.mechanisms.document import CandidateSet

    return _load(CandidateSet, path)


def load_recoder(path: Path | None) -> Any:
    """A :class:`Recoder` file, its fingerprint checked (None: no recoder)."""
    from textdp.mechanisms.document import Recoder

    return None if path is None else _load(Recoder, path)
