"""``textdp assess``: privacy risk and utility of each mechanism × ε on the user's own file,
and a recommendation under the user's targets (:func:`textdp.assess`)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from textdp.cli._common import CLIError, one_line, say
from textdp.cli._inputs import check_single
from textdp.io import AtomicFiles, FileError, ReadOptions, open_records

__all__ = ["assess"]

HELP = """Measure, on a sample of INPUT, what each mechanism and ε leaks and what it keeps,
and recommend the best setting that meets your targets. Nothing is released.

\b
Per setting (the default grid: mvc, diffractor, custext, tem at six ε each, and MVC
with stop words kept and with a document budget):
  leakage      names, places, organisations, addresses and identifiers of the
               originals (textdp's own recognisers) surviving verbatim; words unchanged
  linkage      an attacker holding the originals links private documents back
               (TF-IDF and MiniLM nearest neighbour, top-1 and top-5, against chance)
  utility      MiniLM similarity with the original; with --label-field, the accuracy of
               a TF-IDF + logistic-regression classifier (train private / test private,
               train clean / test private) against the originals and chance
  cost         words per second

The report is computed on your private data and is NOT private: it is for the data
owner only. No private text is written and no ledger budget is spent.

\b
Writes (-o DIR): DIR/report.json, report.md, report.html (self-contained) and
frontier.png; or only the files named by --json, --markdown, --html; or, with none of
these, the Markdown report on standard output.

\b
Example:
  textdp assess tickets.jsonl --text-field text --label-field issue -o assessment
  textdp privatize tickets.jsonl --text-field text -o private.jsonl -m mvc --epsilon 4
"""


def _floats(value: str, what: str) -> list[float]:
    try:
        return [float(x) for x in value.split(",") if x.strip()]
    except ValueError:
        raise CLIError(f"{what} must be comma-separated numbers, got {value!r}") from None


def _names(value: str) -> list[str]:
    return [x.strip() for x in value.split(",") if x.strip()]


def _read(path: Path, text_field: str, label_field: str | None, format: str | None
          ) -> tuple[list[str], list[str] | None]:
    fields = (text_field,) if label_field is None else (text_field, label_field)
    if label_field is not None and label_field == text_field:
        raise CLIError("--label-field must differ from --text-field")
    texts: list[str] = []
    # Labels may be integers or booleans (as most labelled sets store them): read as text.
    options = ReadOptions(text_fields=fields, scalar_fields=fields[1:])
    with open_records(path, format=format, options=options) as reader:
        for batch in reader.batches(4096):
            texts += batch.texts
    if label_field is None:
        return texts, None
    return texts[0::2], texts[1::2]  # each record yields its fields in the order given


def assess(
    input: Annotated[Path, typer.Argument(
        metavar="INPUT", show_default=False,
        help="Documents: .txt (one per line), .jsonl, .csv, .tsv or .parquet (.gz/.zst too).")],
    text_field: Annotated[str, typer.Option(
        "--text-field", help="The field or column holding the text (ignored for .txt).")]
        = "text",
    label_field: Annotated[str | None, typer.Option(
        "--label-field", show_default=False,
        help="A field or column holding a task label (strings, integers or booleans): "
             "adds task accuracy.")] = None,
    format: Annotated[str | None, typer.Option(
        "--format", show_default=False, help="The input format, when not by extension.")] = None,
    mechanisms: Annotated[str | None, typer.Option(
        "--mechanisms", "-m", metavar="NAMES", show_default=False,
        help="Comma-separated mechanisms (default: mvc,diffractor,custext,tem + MVC variants).")]
        = None,
    epsilons: Annotated[str | None, typer.Option(
        "--epsilons", metavar="E1,E2,…", show_default=False,
        help="Comma-separated ε for every mechanism (default: each mechanism's own six).")]
        = None,
    max_linkage: Annotated[str, typer.Option(
        "--max-linkage", metavar="X",
        help="Target: top-1 linkage at most X (0.05, 5%, or 5x chance).")] = "5x",
    max_entities: Annotated[int, typer.Option(
        "--max-entities", metavar="N", min=0,
        help="Target: at most N entities/identifiers of the sample surviving.")] = 0,
    min_utility: Annotated[float | None, typer.Option(
        "--min-utility", metavar="U", min=0.0, max=1.0, show_default=False,
        help="Target: mean MiniLM similarity (or task accuracy) at least U, in [0, 1].")]
        = None,
    sample: Annotated[int | None, typer.Option(
        "--sample", metavar="N", min=2, show_default=False,
        help="Documents to assess (default: what fits --time-budget).")] = None,
    time_budget: Annotated[float, typer.Option(
        "--time-budget", metavar="SECONDS", min=1.0,
        help="Time the measurements should take when --sample is not given.")] = 300.0,
    seed: Annotated[int | None, typer.Option(
        "--seed", min=0, show_default=False,
        help="Seed of the sample, the split and the noise (default: random, recorded).")]
        = None,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", metavar="DIR", show_default=False,
        help="Write report.json, report.md, report.html and frontier.png into DIR.")] = None,
    json_path: Annotated[Path | None, typer.Option(
        "--json", metavar="FILE", show_default=False, help="Write the JSON report here.")] = None,
    markdown_path: Annotated[Path | None, typer.Option(
        "--markdown", metavar="FILE", show_default=False,
        help="Write the Markdown report here.")] = None,
    html_path: Annotated[Path | None, typer.Option(
        "--html", metavar="FILE", show_default=False, help="Write the HTML report here.")]
        = None,
) -> None:
    from textdp.assess import assess as run_assessment
    from textdp.privacy import format_up
    from textdp.text.entities import EntityModelError

    targets = _outputs(out, json_path, markdown_path, html_path)
    check_single(input, targets, read=False)  # read below: its own errors, as they were
    texts, labels = _read(input, text_field, label_field, format)
    try:
        result = run_assessment(
            texts, labels, sample=sample, seed=seed, time_budget=time_budget,
            max_linkage=max_linkage, max_entities=max_entities, min_utility=min_utility,
            progress=_bar, mechanisms=_names(mechanisms) if mechanisms is not None else None,
            epsilons=_floats(epsilons, "--epsilons") if epsilons is not None else None)
    except (ValueError, TypeError, EntityModelError) as exc:
        if isinstance(exc, FileError):
            raise
        raise CLIError(one_line(exc)) from None
    if not targets:  # through a group: a closed pipe or a full disk is an error, not a crash
        with AtomicFiles() as files:
            files.write_bytes("-", result.to_markdown().encode("utf-8"))
        return
    _write(result, targets, out)
    rec = result.recommended
    say(f"assessed {len(result.rows)} settings on {result.meta['sample']['documents']} "
        "documents; " + (f"recommended: {rec['label']} at ε = {format_up(rec['epsilon'])}" if rec
                         else "no setting meets the targets (see the report)"))
    say("wrote " + ", ".join(str(p) for p in targets.values()))


def _outputs(out: Path | None, json_path: Path | None, markdown_path: Path | None,
             html_path: Path | None) -> dict[str, Path]:
    """What to write where: -o DIR's four files, or the files named one by one."""
    targets: dict[str, Path] = {}
    if out is not None:
        if out.exists() and not out.is_dir():
            raise FileError(out, None, "exists and is not a directory")
        if not out.absolute().parent.is_dir():
            raise FileError(out, None, f"directory {str(out.parent)!r} does not exist")
        targets = {"JSON report": out / "report.json", "Markdown report": out / "report.md",
                   "HTML report": out / "report.html", "plot": out / "frontier.png"}
    for what, path in (("JSON report", json_path), ("Markdown report", markdown_path),
                       ("HTML report", html_path)):
        if path is not None:
            if what in targets:
                raise CLIError(f"give either -o DIR or --{what.split()[0].lower()}, not both")
            targets[what] = path
    return targets


def _write(result: Any, targets: dict[str, Path], out: Path | None) -> None:
    from textdp.assess.render import frontier_png

    with AtomicFiles() as files:  # all the reports appear together, or none
        if out is not None:
            out.mkdir(exist_ok=True)
        for what, path in targets.items():
            if what == "JSON report":
                data = result.to_json().encode("utf-8")
            elif what == "Markdown report":
                image = "frontier.png" if out is not None else None
                data = result.to_markdown(image=image).encode("utf-8")
            elif what == "HTML report":
                data = result.to_html().encode("utf-8")
            else:
                data = frontier_png(result)
            files.write_bytes(path, data)


def _bar(description: str, total: int) -> Any:
    """Per-setting progress on stderr: a bar on a terminal, else one line per setting when it
    ends (a log or a CI job sees the run advance too)."""
    if not sys.stderr.isatty():
        return _Line(description, total)
    from tqdm import tqdm

    return tqdm(total=total, unit="doc", desc=description, file=sys.stderr, leave=False,
                dynamic_ncols=True)


class _Line:
    """The progress of one setting as one stderr line, written when the setting is done."""

    def __init__(self, description: str, total: int) -> None:
        self.description, self.total, self.done = description, total, 0
        self.started = time.perf_counter()

    def update(self, n: int) -> None:
        self.done += n

    def close(self) -> None:
        seconds = time.perf_counter() - self.started
        say(f"assess: {self.description}: {self.done} of {self.total} documents privatised "
            f"in {seconds:.1f} s")


assess.__doc__ = HELP
