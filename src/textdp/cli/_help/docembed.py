"""``textdp docembed --help``: the HELP text and docembed's own options (see
:mod:`textdp.cli._help`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from textdp.cli._common import option

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
