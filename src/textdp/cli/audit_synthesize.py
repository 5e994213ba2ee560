"""``textdp audit-synthesize``: an empirical audit of ``textdp synthesize`` on the user's data."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from textdp.cli._common import CLIError, one_line, option, say, warn
from textdp.cli._inputs import check_out_directory

__all__ = ["audit_synthesize"]

HELP = """Audit `textdp synthesize` on INPUT: canaries, membership, and what of the originals shows.

\b
A random --holdout share of the units (documents, or persons with --unit-field) is held
out; three canary documents, each holding a random secret, are inserted 1, 10 and 100
times into the rest; one synthetic release is made from it (the options of `textdp
synthesize`), and its output is examined:

\b
- canaries: verbatim and near-verbatim occurrences of each secret, and its exposure
  (Carlini et al. 2019) estimated against --candidates secrets never inserted;
- membership: each original's cosine similarity (MiniLM) to its nearest synthetic
  document, members against held-out non-members: the AUC, and an empirical ε lower
  bound (Clopper-Pearson, --alpha) printed beside the ε the accountant claims;
- privacy in practice: names and identifiers of the originals found in the output,
  8-word sequences of exactly one original found in it, and the originals that have a
  synthetic document closer than their own nearest other original.

\b
An audit can refute a privacy claim, never prove one. Nothing is released: the synthetic
documents of the audit are not written, and the report holds exact facts about the
private input (for the data owner only). Output: Markdown on stdout; --out DIR writes
audit.json and audit.md. Exit status 0 whatever the findings, 2 on a user error.

\b
Example:
  textdp audit-synthesize tickets.jsonl --label-field issue --epsilon 4 -n 100 \\
      --document-kind "customer support ticket" --out audit-synth/
"""

#: What ``--out DIR`` receives.
WRITTEN = ("audit.json", "audit.md")


def audit_synthesize(
    input: Annotated[Path, typer.Argument(metavar="INPUT", show_default=False, help=(
        "The private documents: .txt (one per line), .jsonl, .csv, .tsv or .parquet."))],
    epsilon: Annotated[float, option("--epsilon", metavar="E",
                                     help="ε of the release audited (dataset level).")],
    n: Annotated[int, option("-n", metavar="N", min=1, help="Synthetic documents to make.")],
    text_field: Annotated[str, option("--text-field", help="The field holding the text.")]
        = "text",
    label_field: Annotated[str | None, option("--label-field", metavar="L", help=(
        "A field holding a label: label-conditional generation."))] = None,
    unit_field: Annotated[str | None, option("--unit-field", metavar="PERSON", help=(
        "A field naming who wrote each document: persons are the unit."))] = None,
    delta: Annotated[float | None, option("--delta", metavar="D", help="δ (default as "
                                          "synthesize).")] = None,
    rounds: Annotated[int, option("--rounds", metavar="T", min=1,
                                  help="Rounds of private voting.")] = 3,
    holdout: Annotated[float, option("--holdout", metavar="SHARE", help=(
        "Share of the units held out as non-members."))] = 0.5,
    candidates: Annotated[int, option("--candidates", metavar="M", min=1, help=(
        "Secrets never inserted, against which each canary's exposure is ranked."))] = 10_000,
    alpha: Annotated[float, option("--alpha", help="The chance that the ε lower bound is "
                                   "wrong.")] = 0.05,
    document_kind: Annotated[str, option("--document-kind", metavar="WORDS", help=(
        "What the documents are, for the public prompts."))] = "text",
    max_new_tokens: Annotated[int, option("--max-new-tokens", metavar="K", min=1,
                                          help="Tokens per generated document.")] = 64,
    seed: Annotated[int | None, option("--seed", metavar="S", min=0, help=(
        "Reproducible audit (split, canaries, release)."))] = None,
    model: Annotated[Path | None, option("--model", metavar="PATH", help=(
        "A local causal LM (default SmolLM2-135M-Instruct)."))] = None,
    device: Annotated[str, option("--device", metavar="auto|cpu|cuda",
                                  help="Where the language model runs.")] = "auto",
    entities: Annotated[str | None, option(
        "--entities", metavar="KINDS|none", help="Entity kinds masked in the private input "
        "(default: person, location, org, address).")] = None,
    out: Annotated[Path | None, option("--out", "-o", metavar="DIR", help=(
        "Write audit.json and audit.md to DIR (created if missing)."))] = None,
    format: Annotated[str | None, option("--format", metavar="FMT",
                                         help="INPUT's format when not by extension.")] = None,
) -> None:
    from textdp.audit.synthesis import audit_synthesis
    from textdp.cli._synthesis import read_records, stage_bar
    from textdp.io import check_input
    from textdp.synthesis import DataRefused

    check_input(input, format)
    check_out_directory(out)
    if not 0 < holdout < 1:
        raise CLIError(f"--holdout must lie strictly between 0 and 1, got {holdout:g}")
    if not 0 < alpha < 1:
        raise CLIError(f"--alpha must lie strictly between 0 and 1, got {alpha:g}")
    source = read_records(input, text_field, label_field, unit_field, format)
    try:
        result = audit_synthesis(
            source.texts, labels=source.labels, units=source.units, epsilon=epsilon, n=n,
            delta=delta, rounds=rounds, holdout=holdout, candidates=candidates, alpha=alpha,
            seed=seed, document_kind=document_kind, max_new_tokens=max_new_tokens, model=model,
            device=device, progress=stage_bar, entities="default" if entities is None else entities)
    except (DataRefused, ValueError, TypeError, ImportError) as exc:
        raise CLIError(one_line(exc)) from None
    _write(result, out)
    say(result.summary())
    if seed is not None:
        warn("seeded audit: reproducible, and its release's noise can be recomputed")


def _write(result: Any, out: Path | None) -> None:
    """The Markdown on standard output and, with --out, the two files, written together."""
    from textdp.io.atomic import AtomicFiles

    text = result.markdown() + "\n"
    with AtomicFiles() as files:
        files.write_bytes("-", text.encode("utf-8"))
        if out is not None:
            out.mkdir(exist_ok=True)
            files.write_json(out / "audit.json", result.to_dict())
            files.write_bytes(out / "audit.md", ("# Audit of a synthetic release\n\n"
                                                 + text).encode("utf-8"))


audit_synthesize.__doc__ = HELP
