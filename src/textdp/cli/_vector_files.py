"""The files of ``textdp embed`` and ``textdp docembed``: INPUT... and OUTPUT resolved and
checked as privatize's (:mod:`textdp.cli._inputs`, with each command's
:class:`~textdp.cli._inputs.InputRules`), the encoder of ``embed --encode``, and each command's
``--engine ray`` path onto :mod:`textdp.engines.ray.vector_files` (the same checks, mechanism,
report and ledger as the local engine; the files read, released and written on the workers).
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

from textdp.cli._common import CLIError, check_new_file, count, one_line, say, warn
from textdp.cli._ledger import CommandLedger, fingerprint_file
from textdp.io import FileError, check_input, is_stream
from textdp.io.vectors import VECTOR_FORMATS

__all__ = ["TEXT_FORMATS", "docembed_on_ray", "docembed_paths", "embed_done", "embed_encoder",
           "embed_on_ray", "embed_paths"]

TEXT_FORMATS = (".txt", ".jsonl", ".ndjson", ".csv", ".parquet", ".pq")
Pairs = list[tuple[Any, Any]]


def _paths(inputs: list[str], output: str, report: Path | None, engine: str,
           workers: int | None, address: str | None, *, sources: Mapping[str, Path | None],
           ledger: Path | None, check: Callable[[Any, str | None], object],
           check_local: Callable[[Path, Path, Path | None], None],
           output_suffixes: tuple[str, ...], output_name: Callable[[Any], str]
           ) -> tuple[Any, Any, Pairs | None]:
    """The input (a path, or the tuple of several), the output, and the Ray job's (input,
    output) pairs (None: local); no two paths the same file (``sources``: other inputs)."""
    from textdp.cli._inputs import InputRules, check_engine, check_remote_pair, local, resolve_files

    found = resolve_files(inputs, output, engine, sources=dict(sources),
                          targets={"report": report, "ledger": ledger}, workers_read_stdin=False)

    def check_pair(src: Any, dst: Any, report: Path | None, format: str | None) -> None:
        if local(src) and local(dst):
            check_local(src, dst, report)
        else:
            check_remote_pair(src, dst, check, output_suffixes)

    rules = InputRules(check=check, output_name=output_name, check_pair=check_pair)
    pairs = check_engine(engine, workers, address, found.inputs, found.output, report, None,
                         rules)
    return found.input, found.output, pairs


# --- embed ---------------------------------------------------------------------------------------

def embed_paths(inputs: list[str], output: str, report: Path | None, ledger: Path | None,
                engine: str, workers: int | None, address: str | None, encode: bool
                ) -> tuple[Any, Any, Pairs | None]:
    """embed's INPUT... and OUTPUT (see :func:`_paths`): vectors, or texts with --encode."""
    from textdp.cli._inputs import file_check

    return _paths(inputs, output, report, engine, workers, address, sources={}, ledger=ledger,
                  check=file_check(TEXT_FORMATS if encode else VECTOR_FORMATS),
                  check_local=partial(_check_embed_paths, encode=encode),
                  output_suffixes=VECTOR_FORMATS, output_name=_embed_output_name)


def _check_embed_paths(input: Path, output: Path, report: Path | None, encode: bool) -> None:
    suffix = input.suffix.lower()
    allowed = TEXT_FORMATS if encode else VECTOR_FORMATS
    if suffix not in allowed:
        hint = (" (texts need --encode glove-mean|sbert)" if not encode and suffix in TEXT_FORMATS
                else " (vectors cannot be encoded: drop --encode)" if encode and suffix == ".npy"
                else "")
        raise FileError(input, None, f"unsupported input type {suffix or '(none)'!r}; use one of "
                                     f"{', '.join(allowed)}{hint}")
    if not input.exists():
        raise FileError(input, None, "no such file")
    if input.is_dir():
        raise FileError(input, None, "is a directory, expected a file")
    if is_stream(input):
        raise FileError(input, None, "is a pipe or device; embed reads a regular file (save the "
                                     "input to a file first)")
    if input.stat().st_size == 0:
        raise FileError(input, None, "empty file (0 bytes)")
    if output.suffix.lower() not in VECTOR_FORMATS:
        raise FileError(output, None, f"unsupported output type {output.suffix or '(none)'!r}; use "
                                      ".npy or .parquet")
    check_new_file(output, "output", (input, "input"))
    if report is not None:
        check_new_file(report, "report", (input, "input"), (output, "output"))


def _embed_output_name(path: Any) -> str:
    """The output of one file of several on Ray: a vector file keeps its name, a text file
    gives NAME.parquet (a Parquet file of texts keeps its name)."""
    stem, suffix = posixpath.splitext(path.name)
    if suffix.lower() in VECTOR_FORMATS + (".pq",):
        return path.name
    return f"{stem}.parquet"


def embed_encoder(encode: Any, vocabulary: str | None) -> Any:
    """The encoder of --encode (and --vocabulary), or a one-line error when its extra is
    missing."""
    from textdp.cli._vocabulary import resolve_vocabulary
    from textdp.encoders import GloveMean, get_encoder

    try:
        encoder = (GloveMean(resolve_vocabulary(vocabulary)) if vocabulary is not None
                   else get_encoder(encode.value))
        if encode.value == "sbert":
            encoder.model_dir()  # fail early, with the install hint, if the extra is missing
    except ImportError as exc:
        raise CLIError(one_line(exc)) from None
    return encoder


def embed_done(rows: int, dim: int, output: Path, mech: Any, audit: Any, report: Path | None,
               result: Any) -> None:
    """embed's summary on stderr, after OUTPUT and the report are written."""
    say(f"wrote {count(rows, 'private vector')} of dimension {dim} to {output}")
    for line in _summary(mech, audit):
        say(line)
    say(f"privacy report: {report}" if report is not None
        else "no report file (add --report PATH to keep the full privacy report)")
    for message in result["warnings"]:
        warn(message)
    if not mech.guarantee.verified:
        warn("the guarantee rests on unverified assumptions (see the report's 'assumptions')")



def _summary(mech: Any, audit: Any) -> list[str]:
    from textdp.privacy import format_up

    g = mech.guarantee
    lines = [f"{mech.name}: {g.notion}, ε = {format_up(g.epsilon)} per unit of ‖x − x′‖"
             + (f", δ = {format_up(g.delta)}" if g.delta else ", δ = 0")]
    if hasattr(mech, "m"):
        lines.append(f"m = {mech.m} (d = {mech.dim}, ω = {mech.gaussian_width:.4g}, "
                     f"β = {mech.beta:g}), Φ sha256 {mech.projection_fingerprint[:16]}…, "
                     f"projection seed {mech.projection_seed}")
    if audit is not None:
        lines.append(audit.summary())
    return lines



def embed_on_ray(pairs: Pairs, input: Any, output: Any, report: Path | None,
                 book: CommandLedger, build: Any, *, seed: int | None, encode: Any,
                 vocabulary: str | None, text_field: str, vector_field: str, batch_size: int,
                 audit_pairs: int, workers: int | None, address: str | None, verbose: bool,
                 t0: float) -> None:
    """``embed --engine ray``."""
    from textdp.cli._ledger import encoder_space
    from textdp.engines.ray.pool import Job, io_section
    from textdp.engines.ray.vector_files import run_embed, shapes, vector_fingerprint
    from textdp.mechanisms.embedding.release import CHUNK_ROWS
    from textdp.privacy.measurement import InputSpace
    from textdp.privacy.report import ReportContext, embedding_report, json_ready

    paths = [src for src, _ in pairs]
    if encode is not None:
        encoder = embed_encoder(encode, vocabulary)
        rows, dim = None, int(encoder.dim)
        fingerprint = partial(fingerprint_file, paths, text_field=text_field)
        kind, space = "texts", encoder_space(encoder)
        spec: tuple[str, str | None] | None = (encode.value, vocabulary)
    else:
        encoder, spec = None, None
        sizes = shapes(pairs, vector_field)
        rows, dim = [n for n, _ in sizes], sizes[0][1]
        fingerprint = vector_fingerprint(paths, vector_field, sum(rows), dim)
        kind, space = "vectors", InputSpace.vectors(dim)
    mech = build(dim)
    with book.check(mech, fingerprint, kind, space, seed=seed), \
            Job(workers, address, verbose) as job, book.files() as files:
        answers, audit, problems = run_embed(
            job, pairs, output, mechanism=mech, dim=dim, rows=rows, seed=seed,
            vector_field=vector_field, text_field=text_field, encoder=spec,
            batch_size=batch_size, audit_pairs=audit_pairs, files=files)
        n = sum(a["rows"] for a in answers)
        empty = sum(a["empty"] for a in answers) if encoder is not None else None
        dim_out = answers[0]["dim_out"]
        io = io_section(input, output, answers, single=pairs == [(input, output)])
        result = book.attach(embedding_report(
            mech, vectors_in=n, vectors_out=n, dim_in=dim, dim_out=dim_out, seed=seed,
            seconds=sum(a["seconds"] for a in answers),  # inside the workers
            encoder=encoder.describe() if encoder is not None else None, empty_texts=empty,
            audit=audit, chunk_rows=CHUNK_ROWS,
            context=ReportContext(**job.context(time.perf_counter() - t0, io))))
        if report is not None:
            files.write_json(report, json_ready(result))
    for problem in problems:
        warn(f"audit skipped for {problem}")
    embed_done(n, dim_out, output, mech, audit, report, result)


# --- docembed ------------------------------------------------------------------------------------

def docembed_paths(inputs: list[str], output: str, report: Path | None,
                   others: tuple[Path, Path | None, Path | None], engine: str,
                   workers: int | None, address: str | None) -> tuple[Any, Any, Pairs | None]:
    """docembed's INPUT... and OUTPUT (see :func:`_paths`); ``others``: the candidates, the
    recoder, the ledger."""
    candidates, recoder, ledger = others
    return _paths(inputs, output, report, engine, workers, address,
                  sources={"candidate file": candidates, "recoder file": recoder}, ledger=ledger,
                  check=check_input, check_local=_check_docembed_paths, output_suffixes=(".npy",),
                  output_name=_docembed_output_name)


def _check_docembed_paths(input: Path, output: Path, report: Path | None) -> None:
    check_input(input)
    if output.suffix.lower() != ".npy":
        raise FileError(output, None, "the output must be a .npy file")
    check_new_file(output, "output", (input, "input"))
    if report is not None:
        check_new_file(report, "report", (input, "input"), (output, "output"))


def _docembed_output_name(path: Any) -> str:
    """The output of one file of several on Ray: its name without the last extension, .npy."""
    return f"{posixpath.splitext(path.name)[0]}.npy"


def docembed_done(rows: int, dim: int, output: Path, mech: Any, report: Path | None,
                  result: Any) -> None:
    """docembed's summary on stderr, after OUTPUT and the report are written."""
    from textdp.privacy import format_up

    say(f"wrote {count(rows, 'embedding')} of dimension {dim} to {output}")
    say(f"deepcandidate: ε-SentDP, ε = {format_up(mech.epsilon)} per document (one sentence substituted, "
        f"same sentence count); {len(mech.candidates)} candidates, p = {mech.n_projections}")
    if report is not None:
        say(f"privacy report: {report}")
    for message in result["warnings"]:
        warn(message)


def docembed_on_ray(pairs: Pairs, input: Any, output: Any, report: Path | None,
                    book: CommandLedger, mech: Any, sentences: Any, *, seed: int | None,
                    text_field: str, batch_size: int, workers: int | None, address: str | None,
                    verbose: bool, started: float) -> None:
    """``docembed --engine ray`` (:mod:`textdp.engines.ray.vector_files`): the same mechanism, report and
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
    docembed_done(len(counts), dim, output, mech, report, result)
