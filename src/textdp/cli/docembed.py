"""``textdp docembed``: ε-SentDP document embeddings with DeepCandidate, written to a .npy file."""

from __future__ import annotations

import posixpath
import time
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from textdp.cli._common import CLIError, check_new_file, count, one_line, option, say, warn
from textdp.cli._documents import EncoderOpt, load_candidates, load_recoder, sentence_encoder
from textdp.cli._ledger import BudgetOpt, CommandLedger, LedgerOpt, LedgerPolicyOpt, fingerprint_file
from textdp.cli._options import ReportOpt, SeedOpt, TextFieldOpt
from textdp.cli._ray import AddressOption, EngineOption, VerboseOption, WorkersOption
from textdp.io import FileError, check_input

HELP = """Embed every document of INPUT privately (ε-SentDP) and write an (N, d) array to OUTPUT.npy.

\b
Each document is split into sentences (pysbd, offline), each sentence is encoded with the
sentence encoder the candidates were built with (--encoder; all-MiniLM-L6-v2 by default,
offline, extra 'sbert'), passed through the recoder H (--recoder, if the candidates were built
with one), and DeepCandidate releases one of the public candidates of --candidates, sampled
with probability ∝ exp(ε·u/2), u = the approximate Tukey depth of the candidate among the
document's sentences (Meehan, Mrini & Chaudhuri, ACL 2022). Row i of OUTPUT is the candidate
released for document i. Build the candidates and the recoder from PUBLIC documents with
`textdp recoder train` and `textdp candidates build`.

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
--engine ray: the same release on a Ray actor pool (extra 'ray'); INPUT may then be what
privatize --engine ray takes: a directory, a quoted glob pattern, several files, or a URI
(s3://bucket/prefix/, gs://…, file://…) of text files, and OUTPUT a directory or prefix:
NAME.npy for each input (its name without the last extension). A seed gives the local engine's rows over the
files in name order.

\b
Example:
  textdp recoder train public.txt -o recoder.npz
  textdp candidates build public.txt -o candidates.npz --recoder recoder.npz
  textdp docembed reviews.txt -o reviews.npy --epsilon 10 --candidates candidates.npz \\
      --recoder recoder.npz --report report.json
"""


DocInputArg = Annotated[list[str], typer.Argument(
    metavar="INPUT", show_default=False,
    help="Input file: .txt (one document per line), .jsonl, .csv or .parquet. --engine ray "
         "also takes a directory, a quoted glob pattern, several files, or a URI.")]
NpyOutputOpt = Annotated[str, option("--output", "-o", metavar="OUTPUT.npy",
                                     help="Output .npy file: one row per document (a directory "
                                          "or URI prefix for several input files).")]
SentEpsilonOpt = Annotated[float, option(
    "--epsilon", metavar="EPSILON", help="ε > 0 of ε-SentDP (smaller = more private; the paper: "
                                         "< 10 strong).")]
CandidatesOpt = Annotated[Path, option(
    "--candidates", metavar="FILE", help="Candidate set (.npz, `textdp candidates build`) built "
                                         "from public documents.")]
RecoderOpt = Annotated[Path | None, option(
    "--recoder", metavar="FILE", help="Recoder H (.npz, `textdp recoder train`) the candidates "
                                      "were built with.")]
ProjectionsOpt = Annotated[int, option(
    "--n-projections", min=1, help="p, the number of random directions of the depth.")]
ProjectionSeedOpt = Annotated[int, option(
    "--projection-seed", min=0, help="Public seed of the directions (must not depend on the data).")]
BatchOpt = Annotated[int, option("--batch-size", min=1, help="Documents encoded per batch.")]


def _check_paths(input: Path, output: Path, report: Path | None) -> None:
    check_input(input)
    if output.suffix.lower() != ".npy":
        raise FileError(output, None, "the output must be a .npy file")
    check_new_file(output, "output", (input, "input"))
    if report is not None:
        check_new_file(report, "report", (input, "input"), (output, "output"))


def build_docembed_mechanism(epsilon: float, candidates: Path, recoder: Path | None,
                             n_projections: int, projection_seed: int) -> Any:
    """Load F (and H) and build DeepCandidate; every problem becomes a one-line user error."""
    from textdp.mechanisms.document import DeepCandidate

    cands = load_candidates(candidates)
    h = load_recoder(recoder)
    if h is None and cands.recoder_fingerprint is not None:
        raise CLIError(f"{candidates}: the candidates were built with a recoder; give it with "
                       "--recoder FILE")
    try:
        return DeepCandidate(cands, epsilon=epsilon, n_projections=n_projections, recoder=h,
                             projection_seed=projection_seed)
    except (TypeError, ValueError) as exc:
        raise CLIError(one_line(exc)) from None


def _encoder_for(mech: Any, name: Any) -> Any:
    """The sentence encoder, checked against the one the candidates were built with."""
    from textdp.encoders import encoder_name

    built_with = mech.candidates.encoder
    encoder = sentence_encoder(name, default=built_with)
    if built_with is not None and built_with != encoder_name(encoder):
        raise CLIError(f"the candidates were embedded with {built_with!r}, not with "
                       f"{encoder_name(encoder)!r}")
    if mech.recoder is not None and mech.recoder.output_dim != mech.candidates.dim:
        raise CLIError(f"the recoder gives {mech.recoder.output_dim}-d embeddings, the candidates "
                       f"are {mech.candidates.dim}-d")
    return encoder


def _release_file(mech: Any, encoder: Any, input: Path, text_field: str, batch_size: int,
                  seed: int | None) -> tuple[np.ndarray, list[int]]:
    """Stream the documents; every document draws from its own generator when seeded."""
    from textdp.encoders import iter_document_embeddings
    from textdp.mechanisms.document import release_documents

    rows: list[np.ndarray] = []
    counts: list[int] = []
    for start, docs in iter_document_embeddings(input, encoder, text_field=text_field,
                                                batch_size=batch_size):
        rows.append(release_documents(mech, docs, seed=seed, start=start))
        counts += [d.shape[0] for d in docs]
    return (np.vstack(rows) if rows else np.zeros((0, mech.candidates.dim))), counts


def docembed(input: DocInputArg, output: NpyOutputOpt, epsilon: SentEpsilonOpt,
             candidates: CandidatesOpt, recoder: RecoderOpt = None,
             n_projections: ProjectionsOpt = 50, projection_seed: ProjectionSeedOpt = 0,
             seed: SeedOpt = None, text_field: TextFieldOpt = "text", report: ReportOpt = None,
             batch_size: BatchOpt = 256, encoder: EncoderOpt = None, ledger: LedgerOpt = None,
             ledger_policy: LedgerPolicyOpt = "warn", budget: BudgetOpt = None,
             engine: EngineOption = "local", workers: WorkersOption = None,
             ray_address: AddressOption = None, verbose: VerboseOption = False) -> None:
    from textdp._checks import check_seed
    from textdp.encoders import encoder_name
    from textdp.privacy.measurement import InputSpace
    from textdp.privacy.report import ReportContext, document_report
    from textdp.runner import Call, Outcome
    from textdp.sentences import splitter_name
    from textdp.spec import VectorSpec

    started = time.perf_counter()
    # 1. Paths and parameters, before anything is read or loaded; no two paths the same file.
    input, output, pairs = _paths(input, output, report, (candidates, recoder, ledger), engine,
                                  workers, ray_address)
    book = CommandLedger(ledger, ledger_policy, budget, input, output, report)
    try:
        seed = check_seed(seed)
    except ValueError as exc:
        raise CLIError(one_line(exc)) from None
    mech = build_docembed_mechanism(epsilon, candidates, recoder, n_projections, projection_seed)
    # 2. The encoder, checked against the one the candidates were built with; 3. the release.
    sentences = _encoder_for(mech, encoder)
    if pairs is not None:
        return _on_ray(pairs, input, output, report, book, mech, sentences, seed=seed,
                       text_field=text_field, batch_size=batch_size, workers=workers,
                       address=ray_address, verbose=verbose, started=started)

    def release(spec: Any, source: Any, measurement: Any) -> Any:
        out, counts = _release_file(mech, sentences, input, text_field, batch_size, seed)
        io = {"input": str(input), "output": str(output), "records_in": len(counts),
              "records_out": int(out.shape[0]), "dim": int(out.shape[1])}
        return Outcome(out, document_report(
            mech, sentence_counts=counts, seed=seed, seconds=time.perf_counter() - started,
            encoder=encoder_name(sentences), sentence_splitter=splitter_name(),
            context=ReportContext(io=io)))

    def commit(outcome: Any, exposed: Any) -> None:
        # 4. Output and report together, or neither (then the --ledger completion).
        with book.files() as files:
            with files.writing(output) as tmp, open(tmp, "wb") as f:
                np.save(f, outcome.output)
            if report is not None:
                files.write_json(report, outcome.report)

    source = book.source(lambda: fingerprint_file(input, text_field=text_field),
                         space=InputSpace.splitter(splitter_name()))
    outcome = book.run(VectorSpec(mech, seed, kind="document"), source, Call(release), commit)
    out, result = outcome.output, outcome.report
    _done(out.shape[0], out.shape[1], output, mech, report, result)


def _done(rows: int, dim: int, output: Path, mech: Any, report: Path | None, result: Any) -> None:
    from textdp.privacy import format_up

    say(f"wrote {count(rows, 'embedding')} of dimension {dim} to {output}")
    say(f"deepcandidate: ε-SentDP, ε = {format_up(mech.epsilon)} per document (one sentence substituted, "
        f"same sentence count); {len(mech.candidates)} candidates, p = {mech.n_projections}")
    if report is not None:
        say(f"privacy report: {report}")
    for message in result["warnings"]:
        warn(message)


def _paths(inputs: list[str], output: str, report: Path | None,
           others: tuple[Path, Path | None, Path | None], engine: str, workers: int | None,
           address: str | None) -> tuple[Any, Any, list[tuple[Any, Any]] | None]:
    """INPUT... and OUTPUT resolved and checked as privatize's (:mod:`textdp.cli._inputs`, with
    docembed's :class:`~textdp.cli._inputs.InputRules`); no two paths the same
    file (``others``: the candidates, the recoder, the ledger). Returns the input (a path, or
    the tuple of several), the output and the Ray job's pairs (None: local)."""
    from textdp.cli._inputs import (
        InputRules,
        check_engine,
        check_remote_pair,
        local,
        resolve_files,
    )

    candidates, recoder, ledger = others
    found = resolve_files(inputs, output, engine,
                          sources={"candidate file": candidates, "recoder file": recoder},
                          targets={"report": report, "ledger": ledger}, workers_read_stdin=False)

    def check_pair(src: Any, dst: Any, report: Path | None, format: str | None) -> None:
        if local(src) and local(dst):
            _check_paths(src, dst, report)
        else:
            check_remote_pair(src, dst, check_input, (".npy",))

    rules = InputRules(output_name=_output_name, check_pair=check_pair)
    pairs = check_engine(engine, workers, address, found.inputs, found.output, report, None,
                         rules)
    return found.input, found.output, pairs


def _output_name(path: Any) -> str:
    """The output of one file of several on Ray: its name without the last extension, .npy."""
    return f"{posixpath.splitext(path.name)[0]}.npy"


def _on_ray(pairs: list[tuple[Any, Any]], input: Any, output: Any, report: Path | None,
            book: CommandLedger, mech: Any, sentences: Any, *, seed: int | None,
            text_field: str, batch_size: int, workers: int | None, address: str | None,
            verbose: bool, started: float) -> None:
    """``--engine ray`` (:mod:`textdp.engines.ray.vector_files`): the same mechanism, report and
    ledger as the local engine; the documents read, released and written on the workers."""
    from textdp.encoders import encoder_name
    from textdp.engines.ray.pool import Job, io_section
    from textdp.engines.ray.vector_files import run_docembed
    from textdp.privacy.measurement import InputSpace
    from textdp.privacy.report import ReportContext, document_report
    from textdp.sentences import splitter_name

    paths = [src for src, _ in pairs]
    fingerprint = partial(fingerprint_file, paths, text_field=text_field)
    with book.check(mech, fingerprint, seed=seed,
                    space=InputSpace.splitter(splitter_name())), \
            Job(workers, address, verbose) as job, book.files() as files:
        answers = run_docembed(job, pairs, output, mechanism=mech, encoder=encoder_name(sentences),
                               seed=seed, text_field=text_field, batch_size=batch_size,
                               files=files)
        counts = [k for a in answers for k in a["counts"]]
        dim = answers[0]["dim"]
        io = io_section(input, output, answers, single=pairs == [(input, output)], dim=dim)
        result = book.attach(document_report(
            mech, sentence_counts=counts, seed=seed, seconds=sum(a["seconds"] for a in answers),
            encoder=encoder_name(sentences), sentence_splitter=splitter_name(),
            context=ReportContext(**job.context(time.perf_counter() - started, io))))
        if report is not None:
            files.write_json(report, result)
    _done(len(counts), dim, output, mech, report, result)


docembed.__doc__ = HELP
