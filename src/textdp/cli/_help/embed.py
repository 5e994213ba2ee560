"""``textdp embed --help``: the HELP text and embed's own options (see :mod:`textdp.cli._help`)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from textdp.cli._common import option

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
