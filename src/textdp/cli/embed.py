"""``textdp embed``: release private embedding vectors (PrivEmb, or the baseline LaplaceVector)."""

from __future__ import annotations

import math
import os
import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import typer

from textdp.cli._common import CLIError, one_line, progress_bar, say, warn
from textdp.io import AtomicFiles, FileError

__all__ = ["embed", "CHUNK_ROWS"]

#: Rows per noise chunk. With --seed, chunk c uses default_rng(SeedSequence(seed, spawn_key=(c,))),
#: so the output depends on the seed and the data only (not on --batch-size).
CHUNK_ROWS = 4096
_AUDIT_KEY = 2**32  # spawn key of the audit's pair sampling, apart from every chunk index

VECTOR_FORMATS = (".npy", ".parquet")
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


# --- input ---------------------------------------------------------------------------------------

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
    if input.stat().st_size == 0:
        raise FileError(input, None, "empty file (0 bytes)")
    if output.suffix.lower() not in VECTOR_FORMATS:
        raise FileError(output, None, f"unsupported output type {output.suffix or '(none)'!r}; use "
                                      ".npy or .parquet")
    for path, what in ((output, "output"), (report, "report")):
        if path is None:
            continue
        if path.absolute() == input.absolute() or (path.exists() and os.path.samefile(path, input)):
            raise FileError(path, None, f"the {what} would overwrite the input")
        if path.is_dir():
            raise FileError(path, None, "is a directory, expected a file name")
        if not path.absolute().parent.is_dir():
            raise FileError(path, None, f"directory {str(path.parent)!r} does not exist")
    if report is not None and report.absolute() == output.absolute():
        raise FileError(report, None, "the report would overwrite the output")


def _read_npy(path: Path) -> np.ndarray:
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise FileError(path, None, f"not a readable .npy array ({one_line(exc)})") from None
    if not isinstance(arr, np.ndarray):
        raise FileError(path, None, "not a .npy array")
    if arr.ndim != 2:
        raise FileError(path, None, f"expected a 2-D array (N vectors × d), got shape {arr.shape}")
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.floating)
                                 or np.issubdtype(arr.dtype, np.integer)):
        raise FileError(path, None, f"expected real numbers, got dtype {arr.dtype}")
    return arr


def _read_parquet_vectors(path: Path, field: str) -> np.ndarray:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(path)
        schema = pf.schema_arrow
    except (pa.ArrowException, OSError) as exc:
        raise FileError(path, None, f"not a readable Parquet file ({one_line(exc)})") from None
    if field not in schema.names:
        shown = ", ".join(repr(n) for n in schema.names[:20])
        raise FileError(path, None, f"no column {field!r} (columns: {shown}); name the vector column "
                                    "with --vector-field, or encode texts with --encode")
    t = schema.field(field).type
    if not (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)):
        raise FileError(path, None, f"column {field!r} has type {t}, expected a list of numbers")
    vt = t.value_type
    if not (pa.types.is_floating(vt) or pa.types.is_integer(vt)):
        raise FileError(path, None, f"column {field!r} holds {vt}, expected numbers")
    try:
        col = pf.read(columns=[field]).column(field).combine_chunks()
    except (pa.ArrowException, OSError) as exc:
        raise FileError(path, None, f"unreadable Parquet data ({one_line(exc)})") from None
    n = len(col)
    if col.null_count:
        row = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0]) + 1
        raise FileError(path, row, f"null vector in column {field!r}", unit="row")
    if pa.types.is_fixed_size_list(t):
        d = t.list_size
    else:
        lengths = col.value_lengths().to_numpy(zero_copy_only=False)
        d = int(lengths[0]) if n else 0
        bad = np.flatnonzero(lengths != d)
        if bad.size:
            raise FileError(path, int(bad[0]) + 1, f"vector of length {int(lengths[bad[0]])}, "
                                                   f"but row 1 has length {d}", unit="row")
    values = col.flatten()
    if values.null_count:
        row = int(np.flatnonzero(values.is_null().to_numpy(zero_copy_only=False))[0]) // max(d, 1) + 1
        raise FileError(path, row, "null inside a vector", unit="row")
    if d == 0:
        raise FileError(path, None, f"column {field!r} holds empty vectors")
    return values.to_numpy(zero_copy_only=False).astype(np.float64, copy=False).reshape(n, d)


def _encode_file(path: Path, text_field: str, encoder: Any, batch_size: int) -> tuple[np.ndarray, int]:
    """Encode every text of ``path``; returns the vectors and the number of texts that gave the
    zero vector because none of their words is known (glove-mean)."""
    from textdp.io import open_records

    parts, empty = [], 0
    with open_records(path, text_field=text_field) as reader:
        make = progress_bar(f"encode ({encoder.name})")
        bar = make(reader.total, reader.unit)
        try:
            for batch in reader.batches(batch_size):
                if hasattr(encoder, "encode_with_counts"):
                    vectors, counts = encoder.encode_with_counts(batch.texts)
                    empty += int((counts == 0).sum())
                else:
                    vectors = encoder(batch.texts)
                parts.append(vectors)
                bar.update(batch.progress)
        finally:
            bar.close()
    if not parts:
        raise FileError(path, None, "no texts")
    return np.concatenate(parts), empty


# --- output --------------------------------------------------------------------------------------

def _write_vectors(files: AtomicFiles, output: Path, vectors: np.ndarray, field: str) -> None:
    tmp = files.path_for(output)
    if output.suffix.lower() == ".npy":
        with open(tmp, "wb") as f:
            np.save(f, vectors, allow_pickle=False)
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    k = vectors.shape[1]
    column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel(), type=pa.float64()), k)
    pq.write_table(pa.table({field: column}), tmp)


def _randomness(seed: int | None) -> dict[str, Any]:
    from textdp._random import SEEDED_NOTE

    if seed is None:
        return {"source": "os-entropy", "seeded": False}
    return {"source": "seed", "seeded": True, "seed": seed,
            "derivation": f"rows {CHUNK_ROWS}·c … {CHUNK_ROWS}·c + {CHUNK_ROWS - 1} use "
                          "default_rng(SeedSequence(seed, spawn_key=(c,)))",
            "note": SEEDED_NOTE}


def _check_finite(X: np.ndarray, path: Path) -> None:
    """Name the first row (1-based) holding NaN or infinity, scanning in chunks (X may be mmapped)."""
    for start in range(0, X.shape[0], 8 * CHUNK_ROWS):
        block = np.asarray(X[start:start + 8 * CHUNK_ROWS])
        bad = np.flatnonzero(~np.isfinite(block).all(axis=1))
        if bad.size:
            raise FileError(path, start + int(bad[0]) + 1, "vector with NaN or infinity", unit="row")


def _release(mech: Any, X: np.ndarray, seed: int | None) -> np.ndarray:
    from textdp._random import document_generator, secure_generator

    n = X.shape[0]
    k = mech.output_dim(X.shape[1])
    out = np.empty((n, k), dtype=np.float64)
    rng = secure_generator() if seed is None else None
    bar = progress_bar("release")(n, "vectors")
    try:
        for c, start in enumerate(range(0, n, CHUNK_ROWS)):
            stop = min(n, start + CHUNK_ROWS)
            chunk_rng = rng if seed is None else document_generator(seed, c)
            out[start:stop] = mech.release(X[start:stop], chunk_rng)
            bar.update(stop - start)
    finally:
        bar.close()
    return out


def _summary(mech: Any, audit: Any) -> list[str]:
    g = mech.guarantee
    lines = [f"{mech.name}: {g.notion}, ε = {g.epsilon:g} per unit of ‖x − x′‖"
             + (f", δ = {g.delta:.3g}" if g.delta else ", δ = 0")]
    if hasattr(mech, "m"):
        lines.append(f"m = {mech.m} (d = {mech.dim}, ω = {mech.gaussian_width:.4g}, "
                     f"β = {mech.beta:g}), Φ sha256 {mech.projection_fingerprint[:16]}…, "
                     f"projection seed {mech.projection_seed}")
    if audit is not None:
        lines.append(audit.summary())
    return lines


# --- the command ---------------------------------------------------------------------------------

def embed(
    input: Annotated[Path, typer.Argument(
        metavar="INPUT", show_default=False,
        help="Vectors (.npy, .parquet) or, with --encode, texts (.txt, .jsonl, .csv, .parquet).")],
    output: Annotated[Path, typer.Option(
        "--output", "-o", metavar="OUTPUT", show_default=False,
        help="Output vectors: .npy or .parquet; its directory must exist.")],
    epsilon: Annotated[float, typer.Option(
        "--epsilon", metavar="EPSILON", show_default=False,
        help="ε > 0 per unit of Euclidean distance between input vectors.")],
    delta: Annotated[float | None, typer.Option(
        "--delta", metavar="DELTA", show_default=False,
        help="PrivEmb: δ in (0, 1), e.g. 1e-6 (the paper's value).")] = None,
    beta: Annotated[float | None, typer.Option(
        "--beta", metavar="BETA", show_default=False,
        help="PrivEmb: β in (0, 1); larger β → smaller m, less noise, coarser distances "
             "(the paper recommends 0.9).")] = None,
    mechanism: Annotated[Mechanism, typer.Option(
        "--mechanism", "-m", help="privemb (M2) or laplace-vector (the baseline M1).")]
        = Mechanism.privemb,
    strict: Annotated[bool, typer.Option(
        "--strict", help="PrivEmb: calibrate the noise to ‖Φ‖₂ (rounded up): pure ε, δ = 0, "
                         "for every pair of R^d; more noise.")] = False,
    snap: Annotated[str | None, typer.Option(
        "--snap", metavar="K|auto", show_default=False,
        help="Round released coordinates to multiples of 2^K (an integer K, or 'auto': the "
             "smallest power of two at least the noise scale).")] = None,
    gaussian_width: Annotated[float | None, typer.Option(
        "--gaussian-width", metavar="OMEGA", show_default=False,
        help="PrivEmb: ω of the input domain (default √log₂ d).")] = None,
    domain_size: Annotated[int | None, typer.Option(
        "--domain-size", metavar="N", show_default=False,
        help="PrivEmb: inputs are among N fixed points (e.g. a vocabulary): ω = √(2 ln N(N−1)) "
             "and δ becomes a proven bound.")] = None,
    calibration: Annotated[Calibration, typer.Option(
        "--calibration", help="PrivEmb: m from √ln(1/δ) (paper) or √(2 ln(1/δ)) (explicit: the "
                              "requested δ is the provable one).")] = Calibration.paper,
    projection_seed: Annotated[int | None, typer.Option(
        "--projection-seed", metavar="SEED", show_default=False,
        help="PrivEmb: public seed of Φ; everyone releasing comparable vectors must share it "
             "(default: textdp's fixed public seed).")] = None,
    seed: Annotated[int | None, typer.Option(
        "--seed", show_default=False,
        help="Non-negative integer for reproducible noise. For testing only: anyone who learns "
             "the seed can undo the noise. Default: OS entropy.")] = None,
    encode: Annotated[EncoderName | None, typer.Option(
        "--encode", show_default=False,
        help="Encode texts first: glove-mean (50-d) or sbert (384-d, needs the 'sbert' "
             "extra).")] = None,
    text_field: Annotated[str, typer.Option(
        "--text-field", help="With --encode: JSON field / CSV or Parquet column of the text.")]
        = "text",
    vector_field: Annotated[str, typer.Option(
        "--vector-field", help="Parquet list column of the vectors (input and output).")]
        = "vector",
    audit_pairs: Annotated[int, typer.Option(
        "--audit-pairs", min=0, help="PrivEmb: pairs of input vectors audited (all pairs if there "
                                     "are fewer); 0 skips the audit.")] = 200_000,
    report: Annotated[Path | None, typer.Option(
        "--report", metavar="PATH", show_default=False,
        help="Write the privacy report (JSON) to PATH.")] = None,
    batch_size: Annotated[int, typer.Option(
        "--batch-size", min=1, help="Texts per encoding batch.")] = 256,
) -> None:
    from textdp import __version__, _random
    from textdp.mechanisms.embedding import DEFAULT_PROJECTION_SEED, LaplaceVector, PrivEmb

    t0 = time.perf_counter()
    # 1. Paths and parameters, before anything is read.
    _check_paths(input, output, report, encode is not None)
    snap_value: int | str | None = None
    if snap is not None:
        if snap == "auto":
            snap_value = "auto"
        else:
            try:
                snap_value = int(snap)
            except ValueError:
                raise CLIError(f"--snap expects an integer exponent or 'auto', got {snap!r}") from None
    if seed is not None and seed < 0:
        raise CLIError(f"--seed must be a non-negative integer, got {seed}")
    privemb_only = {"--delta": delta, "--beta": beta, "--gaussian-width": gaussian_width,
                    "--domain-size": domain_size, "--projection-seed": projection_seed,
                    "--strict": strict or None}
    if mechanism is Mechanism.laplace_vector:
        given = [k for k, v in privemb_only.items() if v is not None]
        if given:
            raise CLIError(f"option(s) {', '.join(given)} only apply to --mechanism privemb")
    else:
        missing = [k for k in ("--delta", "--beta") if privemb_only[k] is None]
        if missing:
            raise CLIError(f"privemb needs {' and '.join(missing)} (e.g. --delta 1e-6 --beta 0.9)")

    def build(dim: int) -> Any:
        try:
            if mechanism is Mechanism.laplace_vector:
                return LaplaceVector(epsilon, snap=snap_value)
            return PrivEmb(epsilon, delta, beta, dim=dim, gaussian_width=gaussian_width,
                           domain_size=domain_size,
                           projection_seed=(DEFAULT_PROJECTION_SEED if projection_seed is None
                                            else projection_seed),
                           calibration=calibration.value, strict=strict, snap=snap_value)
        except (TypeError, ValueError) as exc:
            raise CLIError(one_line(exc)) from None

    build(4)  # validate every parameter before reading the input

    # 2. The vectors.
    encoder = None
    empty_texts = None
    if encode is not None:
        from textdp.encoders import get_encoder

        try:
            encoder = get_encoder(encode.value)
            if encode is EncoderName.sbert:
                encoder.model_dir()  # fail early, with the install hint, if the extra is missing
        except ImportError as exc:
            raise CLIError(one_line(exc)) from None
        X, empty_texts = _encode_file(input, text_field, encoder, batch_size)
    elif input.suffix.lower() == ".npy":
        X = _read_npy(input)
    else:
        X = _read_parquet_vectors(input, vector_field)
    n, d = X.shape
    if n == 0:
        raise FileError(input, None, "no vectors")
    _check_finite(X, input)
    mech = build(d)

    # 3. Release (chunked, per-chunk generators when seeded) and audit.
    W = _release(mech, X, seed)
    audit = None
    if isinstance(mech, PrivEmb) and audit_pairs > 0 and n >= 2:
        audit_rng = (_random.secure_generator() if seed is None else
                     _random.seeded_generator(seed, (_AUDIT_KEY,)))
        try:
            audit = mech.audit(X, max_pairs=audit_pairs, rng=audit_rng)
        except ValueError as exc:  # e.g. all vectors identical
            warn(f"audit skipped: {one_line(exc)}")

    # 4. Output and report, together or not at all.
    description = mech.describe() if isinstance(mech, PrivEmb) else mech.describe(d)
    warnings = list(description.get("warnings", []))
    if empty_texts:
        warnings.append(f"{empty_texts} text(s) have no in-vocabulary word and were encoded as the "
                        "zero vector")
    if audit is not None and not audit.passed:
        warnings.append(f"the audit found {audit.count_above:,} pair(s) of input vectors stretched "
                        f"beyond the calibrated sensitivity {audit.bound:.4g} (max "
                        f"{audit.max_ratio:.4g}): their guarantee is weaker than ε·‖x − x′‖; "
                        "consider --strict")
    result = {
        "command": "embed",
        "textdp_version": __version__,
        "mechanism": description,
        "guarantee": description["guarantee"],
        "m": getattr(mech, "m", None),
        "gaussian_width": getattr(mech, "gaussian_width", None),
        "projection_sha256": getattr(mech, "projection_fingerprint", None),
        "audit": audit.to_dict() if audit is not None else None,
        "randomness": _randomness(seed),
        "encoder": encoder.describe() if encoder is not None else None,
        "io": {"input": os.fspath(input), "output": os.fspath(output),
               "vectors_in": int(n), "vectors_out": int(W.shape[0]), "dim_in": int(d),
               "dim_out": int(W.shape[1]), "empty_texts": empty_texts},
        "warnings": warnings,
        "seconds": round(time.perf_counter() - t0, 3),
    }
    with AtomicFiles() as files:
        _write_vectors(files, output, W, vector_field)
        if report is not None:
            files.write_json(report, _finite(result))

    say(f"wrote {W.shape[0]:,} private vectors of dimension {W.shape[1]} to {output}")
    for line in _summary(mech, audit):
        say(line)
    if report is not None:
        say(f"privacy report: {report}")
    else:
        say("no report file (add --report PATH to keep the full privacy report)")
    for message in warnings:
        warn(message)
    if not mech.guarantee.verified:
        warn("the guarantee rests on unverified assumptions (see the report's 'assumptions')")


def _finite(obj: Any) -> Any:
    """JSON has no infinity: write non-finite floats as strings."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    return obj


embed.__doc__ = HELP
