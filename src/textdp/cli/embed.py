"""``textdp embed``: release private embedding vectors (PrivEmb, or the baseline LaplaceVector)."""

from __future__ import annotations

import os
import posixpath
import time
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from textdp.cli._common import CLIError, check_new_file, count, one_line, option, progress_bar, say, warn
from textdp.cli._ledger import BudgetOpt, CommandLedger, LedgerOpt, LedgerPolicyOpt, embed_input
from textdp.cli._options import ReportOpt, SeedOpt, TextFieldOpt
from textdp.cli._ray import AddressOption, EngineOption, VerboseOption, WorkersOption
from textdp.cli._vocabulary import VocabularyOption, resolve_vocabulary
from textdp.io import FileError, is_stream
from textdp.io.vectors import VECTOR_FORMATS, first_non_finite_row, read_vectors, write_vectors
from textdp.mechanisms.embedding.release import CHUNK_ROWS, audit_projection, release_vectors

__all__ = ["embed", "CHUNK_ROWS"]

TEXT_FORMATS = (".txt", ".jsonl", ".ndjson", ".csv", ".parquet", ".pq")


class Mechanism(StrEnum):
    privemb = "privemb"
    laplace_vector = "laplace-vector"


class EncoderName(StrEnum):
    glove_mean = "glove-mean"
    sbert = "sbert"


class Calibration(StrEnum):
    paper = "paper"
    explicit = "explicit"


HELP = """Release private embedding vectors of INPUT to OUTPUT, with a privacy report.

\b
INPUT, by extension:
  .npy       a 2-D array, one vector per row (read memory-mapped)
  .parquet   vectors in the list column --vector-field (all rows the same length)
  texts      with --encode glove-mean|sbert: .txt (one text per line), .jsonl, .csv or
             .parquet with the text in --text-field; each text is encoded, then privatised
OUTPUT: .npy (an N × m float64 array) or .parquet (one column --vector-field of
fixed-size float64 lists). Row i of OUTPUT is the private vector of record i of INPUT;
nothing else from INPUT is copied.

\b
--engine ray: the same release on a Ray actor pool (extra 'ray'); INPUT may then be what
privatize --engine ray takes: a directory, a quoted glob pattern, several files, or a URI
(s3://bucket/prefix/, gs://…, file://…) of .npy / .parquet files (with --encode: text files),
and OUTPUT a directory or prefix: one output per input, the same name (texts give
NAME.parquet). A seed gives the local engine's vectors over the files in name order.

\b
Mechanisms (--mechanism):
  privemb         PrivEmb (Feyisetan & Kasiviswanathan 2021): w = Φx + κ in R^m,
                  m = ⌈(ω + √ln(1/δ))²/β²⌉, Φ i.i.d. N(0, 1/m) from the public
                  --projection-seed, κ ∝ exp(−ε‖κ‖/(1+β)). (ε, δ)-Lipschitz privacy;
                  needs --delta and --beta. --strict calibrates κ to ‖Φ‖₂: pure ε, δ = 0.
  laplace-vector  the baseline M1: x + noise ∝ exp(−ε‖z‖) in R^d; pure ε.

\b
The report (--report PATH, JSON) gives the guarantee and its assumptions, m, ω, the
projection's sha256 and spectral norm, the audit (PrivEmb: max ‖Φ(x−x′)‖/‖x−x′‖ over
--audit-pairs pairs of the input against 1 + β — computed from the raw input, so keep the
report private), the randomness and the files. Without --report a summary goes to stderr.
OUTPUT and the report appear together at the end, or not at all. Errors print one line and
exit with status 2.

\b
Example:
  textdp embed vectors.npy -o private.npy --epsilon 10 --delta 1e-6 --beta 0.9 --report r.json
  textdp embed reviews.txt -o private.parquet --encode sbert --epsilon 10 --delta 1e-6 --beta 0.9
"""


# --- options -------------------------------------------------------------------------------------

InputArg = Annotated[list[str], typer.Argument(
    metavar="INPUT", show_default=False,
    help="Vectors (.npy, .parquet) or, with --encode, texts (.txt, .jsonl, .csv, .parquet). "
         "--engine ray also takes a directory, a quoted glob pattern, several files, or a URI.")]
OutputOpt = Annotated[str, option("--output", "-o", metavar="OUTPUT",
                                  help="Output vectors: .npy or .parquet; its directory must exist "
                                       "(a directory or URI prefix for several input files).")]
EpsilonOpt = Annotated[float, option(
    "--epsilon", metavar="EPSILON", help="ε > 0 per unit of Euclidean distance between input vectors.")]
DeltaOpt = Annotated[float | None, option(
    "--delta", metavar="DELTA", help="PrivEmb: δ in (0, 1), e.g. 1e-6 (the paper's value).")]
BetaOpt = Annotated[float | None, option(
    "--beta", metavar="BETA", help="PrivEmb: β in (0, 1); larger β → smaller m, less noise, coarser "
                                   "distances (the paper recommends 0.9).")]
MechanismOpt = Annotated[Mechanism, option(
    "--mechanism", "-m", help="privemb (M2) or laplace-vector (the baseline M1).")]
StrictOpt = Annotated[bool, option(
    "--strict", help="PrivEmb: calibrate the noise to ‖Φ‖₂ (rounded up): pure ε, δ = 0, for every "
                     "pair of R^d; more noise.")]
SnapOpt = Annotated[str | None, option(
    "--snap", metavar="K|auto", help="Round released coordinates to multiples of 2^K (an integer K, "
                                     "or 'auto': the smallest power of two at least the noise scale).")]
WidthOpt = Annotated[float | None, option(
    "--gaussian-width", metavar="OMEGA", help="PrivEmb: ω of the input domain (default √log₂ d).")]
DomainOpt = Annotated[int | None, option(
    "--domain-size", metavar="N", help="PrivEmb: inputs are among N fixed points (e.g. a vocabulary): "
                                       "ω = √(2 ln N(N−1)) and δ becomes a proven bound.")]
CalibrationOpt = Annotated[Calibration, option(
    "--calibration", help="PrivEmb: m from √ln(1/δ) (paper) or √(2 ln(1/δ)) (explicit: the requested "
                          "δ is the provable one).")]
ProjectionSeedOpt = Annotated[int | None, option(
    "--projection-seed", metavar="SEED", help="PrivEmb: public seed of Φ; everyone releasing "
    "comparable vectors must share it (default: textdp's fixed public seed).")]
EncodeOpt = Annotated[EncoderName | None, option(
    "--encode", help="Encode texts first: glove-mean (50-d) or sbert (384-d, needs the 'sbert' extra).",
    show_default=False)]
VectorFieldOpt = Annotated[str, option(
    "--vector-field", help="Parquet list column of the vectors (input and output).")]
AuditOpt = Annotated[int, option(
    "--audit-pairs", min=0, help="PrivEmb: pairs of input vectors audited (all pairs if there are "
                                 "fewer); 0 skips the audit.")]
BatchOpt = Annotated[int, option("--batch-size", min=1, help="Texts per encoding batch.")]


# --- checks --------------------------------------------------------------------------------------

def _check_paths(input: Path, output: Path, report: Path | None, encode: bool) -> None:
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


def _snap_value(snap: str | None) -> int | str | None:
    if snap is None or snap == "auto":
        return snap
    try:
        return int(snap)
    except ValueError:
        raise CLIError(f"--snap expects an integer exponent or 'auto', got {snap!r}") from None


def _mechanism_factory(mechanism: Mechanism, epsilon: float, snap: str | None,
                       privemb: dict[str, Any]) -> Any:
    """``dim → mechanism``, after checking which options apply; every parameter problem is a
    one-line user error."""
    from textdp.mechanisms.embedding import DEFAULT_PROJECTION_SEED, LaplaceVector, PrivEmb

    snap_value = _snap_value(snap)
    given = {f"--{k.replace('_', '-')}": v for k, v in privemb.items()}
    if mechanism is Mechanism.laplace_vector:
        extra = [k for k, v in given.items() if v not in (None, False)]
        if extra:
            raise CLIError(f"option(s) {', '.join(extra)} only apply to --mechanism privemb")
    else:
        missing = [k for k in ("--delta", "--beta") if given[k] is None]
        if missing:
            raise CLIError(f"privemb needs {' and '.join(missing)} (e.g. --delta 1e-6 --beta 0.9)")
    if privemb["projection_seed"] is None:
        privemb = {**privemb, "projection_seed": DEFAULT_PROJECTION_SEED}

    def build(dim: int) -> Any:
        try:
            if mechanism is Mechanism.laplace_vector:
                return LaplaceVector(epsilon=epsilon, snap=snap_value)
            return PrivEmb(epsilon=epsilon, dim=dim, snap=snap_value, **privemb)
        except (TypeError, ValueError) as exc:
            raise CLIError(one_line(exc)) from None

    build(4)  # validate every parameter before reading the input
    return build


def _read_input(input: Path, encode: EncoderName | None, text_field: str, vector_field: str,
                batch_size: int, vocabulary: str | None = None) -> tuple[np.ndarray, Any, int | None]:
    """The input vectors (read, or encoded from texts), the encoder and the count of texts that
    had no known word (None when nothing was encoded)."""
    encoder, empty = None, None
    if encode is not None:
        from textdp.encoders import encode_file

        encoder = _encoder(encode, vocabulary)
        X, empty = encode_file(input, encoder, text_field=text_field, batch_size=batch_size,
                               progress=progress_bar(f"encode ({encoder.name})"))
    else:
        X = read_vectors(input, vector_field)
    if X.shape[0] == 0:
        raise FileError(input, None, "no vectors")
    bad = first_non_finite_row(X)
    if bad is not None:
        raise FileError(input, bad + 1, "vector with NaN or infinity", unit="row")
    return X, encoder, empty


def _encoder(encode: EncoderName, vocabulary: str | None) -> Any:
    """The encoder of --encode (and --vocabulary), or a one-line error when its extra is
    missing."""
    from textdp.encoders import GloveMean, get_encoder

    try:
        encoder = (GloveMean(resolve_vocabulary(vocabulary)) if vocabulary is not None
                   else get_encoder(encode.value))
        if encode is EncoderName.sbert:
            encoder.model_dir()  # fail early, with the install hint, if the extra is missing
    except ImportError as exc:
        raise CLIError(one_line(exc)) from None
    return encoder


def _release(mech: Any, X: np.ndarray, seed: int | None, audit_pairs: int) -> tuple[np.ndarray, Any]:
    bar = progress_bar("release")(X.shape[0], "vectors")
    try:
        W = release_vectors(mech, X, seed=seed, progress=bar.update)
    finally:
        bar.close()
    try:
        audit = audit_projection(mech, X, max_pairs=audit_pairs, seed=seed)
    except ValueError as exc:  # e.g. all vectors identical
        warn(f"audit skipped: {one_line(exc)}")
        audit = None
    return W, audit


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


# --- the command ---------------------------------------------------------------------------------

def embed(input: InputArg, output: OutputOpt, epsilon: EpsilonOpt, delta: DeltaOpt = None,
          beta: BetaOpt = None, mechanism: MechanismOpt = Mechanism.privemb,
          strict: StrictOpt = False, snap: SnapOpt = None, gaussian_width: WidthOpt = None,
          domain_size: DomainOpt = None, calibration: CalibrationOpt = Calibration.paper,
          projection_seed: ProjectionSeedOpt = None, seed: SeedOpt = None,
          encode: EncodeOpt = None, text_field: TextFieldOpt = "text",
          vector_field: VectorFieldOpt = "vector", audit_pairs: AuditOpt = 200_000,
          report: ReportOpt = None, batch_size: BatchOpt = 256,
          vocabulary: VocabularyOption = None, ledger: LedgerOpt = None,
          ledger_policy: LedgerPolicyOpt = "warn", budget: BudgetOpt = None,
          engine: EngineOption = "local", workers: WorkersOption = None,
          ray_address: AddressOption = None, verbose: VerboseOption = False) -> None:
    from textdp.privacy.report import ReportContext, embedding_report, json_ready
    from textdp.runner import Call, Outcome
    from textdp.spec import VectorSpec

    t0 = time.perf_counter()
    # 1. Paths and parameters, before anything is read: INPUT and OUTPUT as privatize's.
    input, output, pairs = _paths(input, output, report, ledger, engine, workers, ray_address,
                                  encode is not None)
    book = CommandLedger(ledger, ledger_policy, budget, input, output, report)
    if seed is not None and seed < 0:
        raise CLIError(f"--seed must be a non-negative integer, got {seed}")
    privemb = {"delta": delta, "beta": beta, "gaussian_width": gaussian_width,
               "domain_size": domain_size, "projection_seed": projection_seed,
               "strict": strict, "calibration": calibration.value}
    if mechanism is Mechanism.laplace_vector:
        privemb["calibration"] = None
    build = _mechanism_factory(mechanism, epsilon, snap, privemb)
    if vocabulary is not None and encode is not EncoderName.glove_mean:
        raise CLIError("--vocabulary applies only to --encode glove-mean")
    if pairs is not None:
        return _on_ray(pairs, input, output, report, book, build, seed=seed, encode=encode,
                       vocabulary=vocabulary, text_field=text_field, vector_field=vector_field,
                       batch_size=batch_size, audit_pairs=audit_pairs, workers=workers,
                       address=ray_address, verbose=verbose, t0=t0)

    # 2. The vectors, 3. the release (chunked, per-chunk generators when seeded) and the audit.
    X, encoder, empty_texts = _read_input(input, encode, text_field, vector_field, batch_size,
                                          vocabulary)
    mech = build(X.shape[1])

    def release(spec: Any, source: Any, measurement: Any) -> Any:
        W, audit = _release(mech, X, seed, audit_pairs)
        io = {"input": os.fspath(input), "output": os.fspath(output),
              "records_in": int(X.shape[0]), "records_out": int(W.shape[0])}
        return Outcome((W, audit), embedding_report(
            mech, vectors_in=X.shape[0], vectors_out=W.shape[0], dim_in=X.shape[1],
            dim_out=W.shape[1], seed=seed, seconds=time.perf_counter() - t0,
            encoder=encoder.describe() if encoder is not None else None, empty_texts=empty_texts,
            audit=audit, chunk_rows=CHUNK_ROWS, context=ReportContext(io=io)))

    def commit(outcome: Any, exposed: Any) -> None:
        # 4. Output and report, together or not at all (then the --ledger completion).
        with book.files() as files:
            with files.writing(output) as tmp:  # a full disk names OUTPUT
                write_vectors(tmp, outcome.output[0], vector_field, suffix=output.suffix)
            if report is not None:
                files.write_json(report, json_ready(outcome.report))

    outcome = book.run(VectorSpec(mech, seed), book.source(*embed_input(input, X, encoder,
                                                                        text_field)),
                       Call(release), commit)
    (W, audit), result = outcome.output, outcome.report
    _done(W.shape[0], W.shape[1], output, mech, audit, report, result)


def _done(rows: int, dim: int, output: Path, mech: Any, audit: Any, report: Path | None,
          result: Any) -> None:
    say(f"wrote {count(rows, 'private vector')} of dimension {dim} to {output}")
    for line in _summary(mech, audit):
        say(line)
    say(f"privacy report: {report}" if report is not None
        else "no report file (add --report PATH to keep the full privacy report)")
    for message in result["warnings"]:
        warn(message)
    if not mech.guarantee.verified:
        warn("the guarantee rests on unverified assumptions (see the report's 'assumptions')")


def _paths(inputs: list[str], output: str, report: Path | None, ledger: Path | None,
           engine: str, workers: int | None, address: str | None, encode: bool
           ) -> tuple[Any, Any, list[tuple[Any, Any]] | None]:
    """INPUT... and OUTPUT resolved and checked as privatize's (:mod:`textdp.cli._inputs`, with
    embed's :class:`~textdp.cli._inputs.InputRules`): the input (a path, or
    the tuple of several), the output, and the Ray job's (input, output) pairs (None: local)."""
    from textdp.cli._inputs import (
        InputRules,
        check_engine,
        check_remote_pair,
        file_check,
        local,
        resolve_files,
    )

    found = resolve_files(inputs, output, engine, sources={},
                          targets={"report": report, "ledger": ledger}, workers_read_stdin=False)
    check = file_check(TEXT_FORMATS if encode else VECTOR_FORMATS)

    def check_pair(src: Any, dst: Any, report: Path | None, format: str | None) -> None:
        if local(src) and local(dst):
            _check_paths(src, dst, report, encode)
        else:
            check_remote_pair(src, dst, check, VECTOR_FORMATS)

    rules = InputRules(check=check, output_name=_output_name, check_pair=check_pair)
    pairs = check_engine(engine, workers, address, found.inputs, found.output, report, None,
                         rules)
    return found.input, found.output, pairs


def _output_name(path: Any) -> str:
    """The output of one file of several on Ray: a vector file keeps its name, a text file
    gives NAME.parquet (a Parquet file of texts keeps its name)."""
    stem, suffix = posixpath.splitext(path.name)
    if suffix.lower() in VECTOR_FORMATS + (".pq",):
        return path.name
    return f"{stem}.parquet"


def _on_ray(pairs: list[tuple[Any, Any]], input: Any, output: Any, report: Path | None,
            book: CommandLedger, build: Any, *, seed: int | None, encode: EncoderName | None,
            vocabulary: str | None, text_field: str, vector_field: str, batch_size: int,
            audit_pairs: int, workers: int | None, address: str | None, verbose: bool,
            t0: float) -> None:
    """``--engine ray`` (:mod:`textdp.engines.ray.vector_files`): the same checks, mechanism, report and
    ledger as the local engine; the files read, released and written on the workers."""
    from textdp.cli._ledger import encoder_space, fingerprint_file
    from textdp.engines.ray.pool import Job, io_section
    from textdp.engines.ray.vector_files import run_embed, shapes, vector_fingerprint
    from textdp.mechanisms.embedding.release import CHUNK_ROWS
    from textdp.privacy.measurement import InputSpace
    from textdp.privacy.report import ReportContext, embedding_report, json_ready

    paths = [src for src, _ in pairs]
    if encode is not None:
        encoder = _encoder(encode, vocabulary)
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
    _done(n, dim_out, output, mech, audit, report, result)


embed.__doc__ = HELP
