"""``textdp recoder train`` and ``textdp candidates build``: DeepCandidate's public ingredients.

Meehan, Mrini & Chaudhuri (ACL 2022): the recoder H (§4.3) and the candidate set F (§4.1) are
built from PUBLIC documents of the private documents' domain; ``textdp docembed`` then releases
one candidate per private document. The work is done by library functions
(:func:`textdp.encoders.encode_document_file`, :func:`~textdp.mechanisms.document.train_recoder`,
:func:`~textdp.mechanisms.document.build_candidates`); these commands are options and files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from textdp.cli._common import CLIError, check_new_file, count, one_line, option, say
from textdp.cli._documents import EncoderOpt, load_recoder, sentence_encoder
from textdp.cli._options import TextFieldOpt
from textdp.io import FileError, check_distinct, check_input

__all__ = ["build_candidates_command", "train_recoder_command"]

PublicInputArg = Annotated[Path, typer.Argument(
    metavar="PUBLIC", show_default=False,
    help="PUBLIC documents: .txt (one document per line), .jsonl, .csv or .parquet.")]
BatchOpt = Annotated[int, option("--encode-batch-size", min=1, help="Documents encoded per batch.")]

TRAIN_HELP = """Train DeepCandidate's recoder H on the PUBLIC documents and write it to OUTPUT.npz.

\b
Each document is split into sentences and encoded with the sentence encoder G (--encoder);
k-means finds --n-clusters clusters among the documents' mean embeddings, and H (an MLP with
--hidden-layers) is trained with Adam so that the mean of H over a document's sentences
predicts its cluster (Meehan, Mrini & Chaudhuri, ACL 2022, §4.3). Needs torch and
scikit-learn. H must be trained on public documents only: it is part of the mechanism.

\b
Example:
  textdp recoder train public.txt -o recoder.npz --n-clusters 50 --seed 0
  textdp candidates build public.txt -o candidates.npz --recoder recoder.npz
"""

BUILD_HELP = """Build DeepCandidate's candidate set F from the PUBLIC documents: OUTPUT.npz.

\b
Each document is split into sentences, encoded with the sentence encoder G (--encoder),
passed sentence by sentence through the recoder H (--recoder, optional) and averaged: one
candidate per document (Meehan, Mrini & Chaudhuri, ACL 2022, §4.1). The file records the
encoder and H's fingerprint, so that `textdp docembed` refuses another H or encoder. F must be
built from public documents only: the release is one of its rows.

\b
Example:
  textdp candidates build public.txt -o candidates.npz --recoder recoder.npz
  textdp docembed reviews.txt -o reviews.npy --epsilon 10 --candidates candidates.npz \\
      --recoder recoder.npz
"""


def _check_paths(input: Path, output: Path) -> None:
    check_input(input)
    if output.suffix.lower() != ".npz":
        raise FileError(output, None, "the output must be a .npz file")
    check_new_file(output, "output", (input, "input"))


def _public_documents(input: Path, encoder: Any, text_field: str, batch_size: int) -> list[Any]:
    from textdp.encoders import encode_document_file

    return encode_document_file(input, encoder, text_field=text_field, batch_size=batch_size)


def _hidden_layers(text: str) -> tuple[int, ...]:
    try:
        widths = tuple(int(w) for w in text.split(","))
    except ValueError:
        widths = ()
    if not widths or min(widths) < 1:
        raise CLIError(f"--hidden-layers expects positive widths separated by commas, got {text!r}")
    return widths


def train_recoder_command(
        input: PublicInputArg,
        output: Annotated[Path, option("--output", "-o", metavar="OUTPUT.npz",
                                       help="The recoder file to write (.npz).")],
        n_clusters: Annotated[int, option("--n-clusters", min=2, help="n_c of k-means (paper: 50).")]
        = 50,
        hidden_layers: Annotated[str, option(
            "--hidden-layers", help="Widths of H's hidden layers, comma-separated.")] = "384,384,384",
        epochs: Annotated[int, option("--epochs", min=1, help="Training epochs.")] = 40,
        batch_size: Annotated[int, option("--batch-size", min=1, help="Documents per step.")] = 32,
        learning_rate: Annotated[float, option("--learning-rate", help="Adam's step size.")] = 1e-3,
        seed: Annotated[int | None, option(
            "--seed", metavar="SEED", min=0, help="Seed of k-means, the initial weights and the "
            "batch order (the documents are public: a seed hides nothing).")] = None,
        encoder: EncoderOpt = None, text_field: TextFieldOpt = "text",
        encode_batch_size: BatchOpt = 256) -> None:
    from textdp import _random
    from textdp._checks import check_rng
    from textdp.encoders import encoder_name
    from textdp.mechanisms.document import train_recoder

    _check_paths(input, output)
    widths = _hidden_layers(hidden_layers)
    sentences = sentence_encoder(encoder)
    docs = _public_documents(input, sentences, text_field, encode_batch_size)
    rng = check_rng(None) if seed is None else _random.document_generator(seed, 0)
    try:
        fit = train_recoder(docs, n_clusters=n_clusters, hidden_layers=widths, epochs=epochs,
                            batch_size=batch_size, learning_rate=learning_rate, rng=rng)
    except (ImportError, ValueError) as exc:
        raise CLIError(one_line(exc)) from None
    fit.recoder.metadata["encoder"] = encoder_name(sentences)
    fit.recoder.save(output)
    say(f"wrote the recoder {fit.recoder!r} to {output}")
    say(f"trained on {len(docs)} public documents, {fit.recoder.metadata['n_clusters']} clusters: "
        f"loss {fit.losses[0]:.4g} → {fit.losses[-1]:.4g}, cluster accuracy {fit.accuracy:.3f}")


def build_candidates_command(
        input: PublicInputArg,
        output: Annotated[Path, option("--output", "-o", metavar="OUTPUT.npz",
                                       help="The candidate file to write (.npz).")],
        recoder: Annotated[Path | None, option(
            "--recoder", metavar="FILE", help="Recoder H (`textdp recoder train`) applied to every "
                                              "sentence before averaging.")] = None,
        encoder: EncoderOpt = None, text_field: TextFieldOpt = "text",
        encode_batch_size: BatchOpt = 256) -> None:
    from textdp.encoders import encoder_name
    from textdp.mechanisms.document import build_candidates
    from textdp.sentences import splitter_name

    check_distinct({"input": input, "recoder": recoder}, {"output": output})
    _check_paths(input, output)
    h = load_recoder(recoder)
    trained_with = h.metadata.get("encoder") if h is not None else None
    sentences = sentence_encoder(encoder, default=trained_with)
    name = encoder_name(sentences)
    if trained_with is not None and trained_with != name:
        raise CLIError(f"the recoder was trained on {trained_with!r} embeddings, not {name!r}")
    docs = _public_documents(input, sentences, text_field, encode_batch_size)
    if h is not None and h.input_dim != docs[0].shape[1]:
        raise CLIError(f"the recoder takes {h.input_dim}-d sentence embeddings, {name} gives "
                       f"{docs[0].shape[1]}-d")
    cands = build_candidates(docs, recoder=h, encoder=name,
                             metadata={"documents": len(docs), "sentence_splitter": splitter_name()})
    cands.save(output)
    say(f"wrote {count(len(cands), 'candidate')} of dimension {cands.dim} to {output} "
        f"(encoder {name}, {'recoder ' + h.fingerprint[:12] if h is not None else 'no recoder'})")


train_recoder_command.__doc__ = TRAIN_HELP
build_candidates_command.__doc__ = BUILD_HELP
