"""``textdp embed``: release private embedding vectors (PrivEmb, or the baseline LaplaceVector)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from textdp.cli._common import CLIError, one_line, progress_bar, warn
from textdp.cli._help.embed import (
    HELP,
    AuditOpt,
    BatchOpt,
    BetaOpt,
    Calibration,
    CalibrationOpt,
    DeltaOpt,
    DomainOpt,
    EncodeOpt,
    EncoderName,
    EpsilonOpt,
    InputArg,
    Mechanism,
    MechanismOpt,
    OutputOpt,
    ProjectionSeedOpt,
    SnapOpt,
    StrictOpt,
    VectorFieldOpt,
    WidthOpt,
)
from textdp.cli._ledger import BudgetOpt, CommandLedger, LedgerOpt, LedgerPolicyOpt, embed_input
from textdp.cli._options import ReportOpt, SeedOpt, TextFieldOpt
from textdp.cli._ray import AddressOption, EngineOption, VerboseOption, WorkersOption
from textdp.cli._vector_files import embed_done, embed_encoder, embed_on_ray, embed_paths
from textdp.cli._vocabulary import VocabularyOption
from textdp.io import FileError
from textdp.io.vectors import first_non_finite_row, read_vectors, write_vectors
from textdp.mechanisms.embedding.release import CHUNK_ROWS, audit_projection, release_vectors

__all__ = ["embed", "CHUNK_ROWS"]

# --- parameters, input and release ---------------------------------------------------------------

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

        encoder = embed_encoder(encode, vocabulary)
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
    input, output, pairs = embed_paths(input, output, report, ledger, engine, workers,
                                       ray_address, encode is not None)
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
        return embed_on_ray(pairs, input, output, report, book, build, seed=seed, encode=encode,
                            vocabulary=vocabulary, text_field=text_field,
                            vector_field=vector_field, batch_size=batch_size,
                            audit_pairs=audit_pairs, workers=workers, address=ray_address,
                            verbose=verbose, t0=t0)

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
    embed_done(W.shape[0], W.shape[1], output, mech, audit, report, result)


embed.__doc__ = HELP
