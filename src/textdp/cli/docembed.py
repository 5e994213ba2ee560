"""``textdp docembed``: ε-SentDP document embeddings with DeepCandidate, written to a .npy file."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from textdp.cli._common import CLIError, one_line, say
from textdp.io import AtomicFiles, FileError, check_input, open_records

HELP = """Embed every document of INPUT privately (ε-SentDP) and write an (N, d) array to OUTPUT.npy.

\b
Each document is split into sentences (pysbd, offline), each sentence is encoded with the
sentence encoder (all-MiniLM-L6-v2, offline; extra 'sbert'), passed through the recoder H
(--recoder, if the candidates were built with one), and DeepCandidate releases one of the
public candidates of --candidates, sampled with probability ∝ exp(ε·u/2), u = the
approximate Tukey depth of the candidate among the document's sentences (Meehan, Mrini &
Chaudhuri, ACL 2022). Row i of OUTPUT is the candidate released for document i.

\b
Guarantee: ε-SentDP — replacing any one sentence of a document by any other sentence
changes the probability of every output by at most a factor e^ε, for documents with the
same number of sentences (the sentence count is not protected). Candidates, recoder and
encoder must come from public data.

\b
INPUT formats, by extension: .txt (one document per line), .jsonl / .csv / .parquet (the
document is --text-field). Empty documents are an error. OUTPUT (and the report) appear only
when everything succeeded.

\b
Example:
  textdp docembed reviews.txt -o reviews.npy --epsilon 10 --candidates candidates.npz \\
      --recoder recoder.npz --report report.json
"""


def _check_paths(input: Path, output: Path, report: Path | None) -> None:
    check_input(input)
    if output.suffix.lower() != ".npy":
        raise FileError(output, None, "the output must be a .npy file")
    if output.is_dir():
        raise FileError(output, None, "is a directory, expected a file name")
    if not output.parent.is_dir():
        raise FileError(output, None, f"directory {str(output.parent)!r} does not exist")
    if output.absolute() == input.absolute():
        raise FileError(output, None, "the output would overwrite the input")
    if report is not None:
        if report.absolute() in (input.absolute(), output.absolute()):
            raise FileError(report, None, "the report would overwrite the input or the output")
        if report.is_dir():
            raise FileError(report, None, "is a directory, expected a file name")
        if not report.parent.is_dir():
            raise FileError(report, None, f"directory {str(report.parent)!r} does not exist")


def build_docembed_mechanism(epsilon: float, candidates: Path, recoder: Path | None,
                             n_projections: int, projection_seed: int) -> Any:
    """Load F (and H) and build DeepCandidate; every problem becomes a one-line user error."""
    from textdp.mechanisms.document import CandidateSet, DeepCandidate, Recoder

    try:
        cands = CandidateSet.load(candidates)
    except FileNotFoundError:
        raise FileError(candidates, None, "no such file") from None
    except ValueError as exc:
        raise CLIError(one_line(exc)) from None
    h = None
    if recoder is not None:
        try:
            h = Recoder.load(recoder)
        except FileNotFoundError:
            raise FileError(recoder, None, "no such file") from None
        except ValueError as exc:
            raise CLIError(one_line(exc)) from None
    elif cands.recoder_fingerprint is not None:
        raise CLIError(f"{candidates}: the candidates were built with a recoder; give it with "
                       "--recoder FILE")
    try:
        return DeepCandidate(epsilon, cands, n_projections=n_projections, recoder=h,
                             projection_seed=projection_seed)
    except (TypeError, ValueError) as exc:
        raise CLIError(one_line(exc)) from None


def docembed(
    input: Annotated[Path, typer.Argument(
        metavar="INPUT", show_default=False,
        help="Input file: .txt (one document per line), .jsonl, .csv or .parquet.")],
    output: Annotated[Path, typer.Option(
        "--output", "-o", metavar="OUTPUT.npy", show_default=False,
        help="Output .npy file: one row per document.")],
    epsilon: Annotated[float, typer.Option(
        "--epsilon", metavar="EPSILON", show_default=False,
        help="ε > 0 of ε-SentDP (smaller = more private; the paper: < 10 strong).")],
    candidates: Annotated[Path, typer.Option(
        "--candidates", metavar="FILE", show_default=False,
        help="Candidate set (.npz written by CandidateSet.save) built from public documents.")],
    recoder: Annotated[Path | None, typer.Option(
        "--recoder", metavar="FILE", show_default=False,
        help="Recoder H (.npz written by Recoder.save) the candidates were built with.")] = None,
    n_projections: Annotated[int, typer.Option(
        "--n-projections", min=1, help="p, the number of random directions of the depth.")] = 50,
    projection_seed: Annotated[int, typer.Option(
        "--projection-seed", min=0,
        help="Public seed of the directions (must not depend on the data).")] = 0,
    seed: Annotated[int | None, typer.Option(
        "--seed", show_default=False,
        help="Non-negative integer for a reproducible run. For testing only: anyone who learns "
             "the seed can undo the randomness. Default: OS entropy.")] = None,
    text_field: Annotated[str, typer.Option(
        "--text-field", help="JSON field, CSV or Parquet column of the document.")] = "text",
    report: Annotated[Path | None, typer.Option(
        "--report", metavar="PATH", show_default=False,
        help="Write the privacy report (JSON) to PATH.")] = None,
    batch_size: Annotated[int, typer.Option(
        "--batch-size", min=1, help="Documents encoded per batch.")] = 256,
) -> None:
    from textdp import __version__, _random
    from textdp._checks import check_seed
    from textdp.mechanisms.document.encoding import encoder_name, load_sbert
    from textdp.sentences import split_sentences, splitter_name

    started = time.perf_counter()
    # 1. Paths and parameters, before anything is read or loaded.
    _check_paths(input, output, report)
    try:
        seed = check_seed(seed)
    except ValueError as exc:
        raise CLIError(one_line(exc)) from None
    mech = build_docembed_mechanism(epsilon, candidates, recoder, n_projections, projection_seed)

    # 2. The encoder, checked against the one the candidates were built with.
    try:
        encoder = load_sbert()
    except ImportError as exc:
        raise CLIError(one_line(exc)) from None
    built_with = mech.candidates.encoder
    if built_with is not None and built_with != encoder_name(encoder):
        raise CLIError(f"the candidates were embedded with {built_with!r}, not with "
                       f"{encoder_name(encoder)!r}")
    if mech.recoder is not None and mech.recoder.output_dim != mech.candidates.dim:
        raise CLIError(f"the recoder gives {mech.recoder.output_dim}-d embeddings, the candidates "
                       f"are {mech.candidates.dim}-d")

    # 3. Stream the documents; every document draws from its own generator when seeded.
    rows: list[np.ndarray] = []
    counts: list[int] = []
    os_rng = _random.secure_generator() if seed is None else None
    with open_records(input, text_field=text_field) as reader:
        for batch in reader.batches(batch_size):
            docs = [split_sentences(t) for t in batch.texts]
            for i, d in enumerate(docs):
                if not d:
                    raise CLIError(f"{input}: document {batch.start + i + 1} has no sentences "
                                   "(DeepCandidate needs at least one)")
            flat = [s for d in docs for s in d]
            emb = np.asarray(encoder(flat), dtype=np.float64)
            parts = np.split(emb, np.cumsum([len(d) for d in docs])[:-1])
            for i, s in enumerate(parts):
                rng = os_rng if seed is None else _random.document_generator(seed, batch.start + i)
                rows.append(mech.release(s, rng).embedding)
                counts.append(s.shape[0])
        records = reader.stats().get("records", len(rows))
    out = np.vstack(rows) if rows else np.zeros((0, mech.candidates.dim))

    # 4. Output and report together, or neither.
    k = np.array(counts)
    result = {
        **mech.describe(),
        "encoder": encoder_name(encoder),
        "sentence_splitter": splitter_name(),
        "documents": len(rows),
        "sentences": {"total": int(k.sum()) if k.size else 0,
                      "min": int(k.min()) if k.size else 0,
                      "max": int(k.max()) if k.size else 0},
        "randomness": _random.describe(seed),
        "textdp_version": __version__,
        "seconds": round(time.perf_counter() - started, 3),
        "io": {"input": str(input), "output": str(output), "records_in": records,
               "rows_out": int(out.shape[0]), "dim": int(out.shape[1])},
    }
    with AtomicFiles() as files:
        with open(files.path_for(output), "wb") as f:
            np.save(f, out)
        if report is not None:
            files.write_json(report, result)

    say(f"wrote {out.shape[0]} embeddings of dimension {out.shape[1]} to {output}")
    say(f"deepcandidate: ε-SentDP, ε = {mech.epsilon:g} per document (one sentence substituted, "
        f"same sentence count); {len(mech.candidates)} candidates, p = {mech.n_projections}")
    if report is not None:
        say(f"privacy report: {report}")
    if seed is not None:
        say(f"warning: seeded run ({_random.SEEDED_NOTE})")


docembed.__doc__ = HELP
