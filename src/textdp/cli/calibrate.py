"""``textdp calibrate``: the ε range meeting worst-case plausible deniability targets."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from textdp.cli._common import (
    BetaOption,
    CLIError,
    MethodOption,
    NListsOption,
    ParamOption,
    one_line,
    say,
    warn,
)
from textdp.cli._privatize_flags import EntitiesOption, FormatOption
from textdp.cli._vocabulary import VocabularyOption, resolve_vocabulary
from textdp.io import FileError, check_distinct, check_input, check_target

if TYPE_CHECKING:
    from textdp.evaluation.calibration import Calibration
    from textdp.mechanisms.base import WordMechanism
    from textdp.vocab import Vocabulary

__all__ = ["NO_EPSILON_MEETS_TARGETS", "calibrate", "parse_floats"]

#: Exit status when no ε of the grid meets the targets (2 is a user error, 1 an internal one).
NO_EPSILON_MEETS_TARGETS = 3

HELP = """Find the ε values at which a mechanism meets worst-case plausible deniability targets.

\b
The method of Feyisetan et al. (WSDM 2020, §3-4): sample --words vocabulary words,
measure N_w = Pr[M(w) = w] and S_w (distinct outputs in --draws draws) for each, at
every ε of a log-spaced grid, and keep the ε where
    max over words of N_w <= --max-nw   and   min over words of S_w >= --min-sw.
Mechanisms with an exact output law (1-Diffractor, TEM, SanText) are measured exactly;
the others (MVC, ...) by Monte Carlo, with every ε seeing the same random numbers, and a
target then counts as met only with a margin of --margin standard errors. Monotonicity is
not assumed: every ε interval meeting the targets is reported, and each boundary is
refined by bisection.

\b
With INPUT (JSONL, CSV/TSV, Parquet or text; --text-field names the field or column),
N_w and S_w are measured on the words of that data instead of a vocabulary sample: the
documents go through the release's own tokeniser, stop-word, identifier and entity
stage (--entities, --keep-stopwords), and each privatised word weighs its count (a word
that occurs 100 times counts 100 times in the means and in the share of the data's
words failing a target). Up to --words distinct words are measured: all of them, or the
most frequent half and a uniform sample of the rest. Out-of-vocabulary words, numbers,
identifiers and entity spans never reach the mechanism: they are counted and reported
apart. The worst cases (the targets) are over the measured words.

\b
Output: a table of the measured ε on stdout, then the range(s) and the recommended ε
(the largest one meeting the targets: the least noise with the privacy asked for);
with --json a JSON object instead (schema in docs/evaluation.md). --plot PATH writes a
PNG of N_w and S_w against ε with the targets, after the results are printed (a failing
plot cannot lose them). Exit status 0 when some ε meets the targets, 3 when none in the
grid does, 2 on a user error, 130 when interrupted.

\b
Example:
  textdp calibrate --mechanism mvc --max-nw 0.5 --min-sw 50 --words 200
  textdp calibrate --mechanism diffractor --method tem --max-nw 0.2 --json
  textdp calibrate tickets.jsonl --text-field body --mechanism mvc --max-nw 0.5
"""


def parse_floats(text: str, what: str) -> list[float]:
    """``"0.1,1,10"`` → [0.1, 1.0, 10.0]; every value finite and > 0."""
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        try:
            value = float(item)
        except ValueError:
            raise CLIError(f"{what}: {item!r} is not a number") from None
        if not (math.isfinite(value) and value > 0):
            raise CLIError(f"{what}: every value must be a finite number > 0, got {item}")
        out.append(value)
    if not out:
        raise CLIError(f"{what}: give at least one number")
    return out


# The options whose declarations would not fit the signature on one line.
InputArg = Annotated[Path | None, typer.Argument(
    metavar="INPUT", show_default=False,
    help="Measure on the words of this file (JSONL, CSV/TSV, Parquet, text; '-' is standard "
         "input with --format) instead of a vocabulary sample.")]
DataTextFieldOpt = Annotated[str, typer.Option(
    "--text-field", metavar="NAME",
    help="JSON field (dotted path), CSV/TSV or Parquet column of the documents of INPUT "
         "(ignored for .txt).")]
KeepStopwordsOpt = Annotated[bool, typer.Option(
    "--keep-stopwords", help="With INPUT: English function words are kept as the release "
                             "would keep them (not measured).")]
MaxNwOpt = Annotated[float | None, typer.Option(
    "--max-nw", show_default=False,
    help="Target: max over words of N_w = Pr[M(w)=w] must be at most this (1 disables it).")]
MinSwOpt = Annotated[float | None, typer.Option(
    "--min-sw", show_default=False,
    help="Target: min over words of S_w must be at least this (1 disables it).")]
WordsOpt = Annotated[int, typer.Option(
    "--words", min=1, help="Vocabulary words sampled uniformly (worst case over them); with "
                           "INPUT, the most distinct words of INPUT measured.")]
GridOpt = Annotated[str | None, typer.Option(
    "--grid", metavar="E1,E2,...", show_default=False,
    help="The ε values to search (default: 4 per decade from --grid-min to --grid-max).")]
MarginOpt = Annotated[float | None, typer.Option(
    "--margin", min=0, show_default=False,
    help="Monte Carlo only: standard errors an estimate must beat a target by (default 3; 0 = "
         "plain point estimates, as in the paper).")]
SupportOpt = Annotated[str, typer.Option(
    "--support", help="S_w statistic: 'distinct' (outputs seen in --draws draws, the paper's) "
                      "or 'mass' (smallest set holding 1-η of the mass; exact laws only).")]
PlotOpt = Annotated[Path | None, typer.Option(
    "--plot", metavar="PATH.png", show_default=False,
    help="Write a PNG of N_w and S_w against ε with the targets.")]


def calibrate(
    input: InputArg = None,
    text_field: DataTextFieldOpt = "text",
    format: FormatOption = None,
    entities: EntitiesOption = None,
    keep_stopwords: KeepStopwordsOpt = False,
    mechanism: Annotated[str, typer.Option(
        "--mechanism", "-m", help="Mechanism name (see `textdp mechanisms`).")] = "mvc",
    max_nw: MaxNwOpt = 0.5,
    min_sw: MinSwOpt = 50.0,
    words: WordsOpt = 200,
    draws: Annotated[int, typer.Option(
        "--draws", min=1, help="Draws per word per ε (the MVC paper uses 1000).")] = 1000,
    grid: GridOpt = None,
    grid_min: Annotated[float, typer.Option("--grid-min", help="Smallest ε of the default grid.")]
        = 0.01,
    grid_max: Annotated[float, typer.Option("--grid-max", help="Largest ε of the default grid.")]
        = 100.0,
    refine: Annotated[int, typer.Option(
        "--refine", min=0, help="Bisection steps per boundary (each halves it in log ε).")] = 5,
    margin: MarginOpt = None,
    support: SupportOpt = "distinct",
    eta: Annotated[float, typer.Option("--eta", help="η of --support mass.")] = 0.01,
    vocabulary_size: Annotated[int | None, typer.Option(
        "--vocabulary-size", min=2, show_default=False,
        help="Restrict the default vocabulary, glove-6b-50d, to wordfreq's top N words.")] = None,
    vocabulary: VocabularyOption = None,
    seed: Annotated[int | None, typer.Option(
        "--seed", min=0, show_default=False,
        help="Seed for the word sample and the draws (default: OS entropy).")] = None,
    method: MethodOption = None,
    n_lists: NListsOption = None,
    beta: BetaOption = None,
    param: ParamOption = None,
    json_output: Annotated[bool, typer.Option(
        "--json", help="Print the result as JSON on stdout.")] = False,
    plot: PlotOpt = None,
) -> int:
    from textdp import _random
    from textdp.cli._common import progress_bar
    from textdp.cli._privatize_flags import mechanism_params
    from textdp.evaluation.calibration import calibrate as run_calibration

    # 1. Everything the user gave, checked before any work.
    eps_grid = _check_options(max_nw, min_sw, support, eta, plot, grid, grid_min, grid_max,
                              input, format)
    params = mechanism_params(mechanism, {"method": method, "n_lists": n_lists, "beta": beta},
                              param or [])
    vocab = resolve_vocabulary(vocabulary, vocabulary_size)
    rng = _random.generator(seed)
    factory, vocab = _factory(mechanism, params, vocab, words if input is None else 1,
                              eps_grid[0])
    if input is None:
        measured, weights = min(words, len(vocab)), None
        measured_on = {"source": "vocabulary sample", "vocabulary_words": len(vocab)}
    else:
        measured, weights, measured_on = _data_words(
            input, text_field, format, mechanism, eps_grid[0], params, vocab,
            entities=entities, keep_stopwords=keep_stopwords, words=words, rng=rng)

    # 2. The search.
    bar = progress_bar("calibrate")(len(eps_grid), "ε")
    try:
        result = run_calibration(
            factory, max_n_w=max_nw, min_s_w=min_sw, words=measured,
            n_draws=draws, grid=eps_grid, refine_steps=refine, support=support,  # type: ignore[arg-type]
            margin=margin, eta=eta, rng=rng, progress=bar.update, weights=weights)
    except ValueError as exc:
        raise CLIError(one_line(exc)) from None
    finally:
        bar.close()

    # 3. Output: the results first, so that nothing failing afterwards (a plot) can lose them.
    _output(result, vocab, seed, draws, json_output, plot, measured_on)
    if result.epsilon is None:
        warn("no ε in the searched grid meets the targets")
        return NO_EPSILON_MEETS_TARGETS
    return 0


def _factory(mechanism: str, params: dict[str, Any], vocab: Vocabulary, words: int,
             first_epsilon: float) -> tuple[Callable[[float], WordMechanism], Vocabulary]:
    """(ε → the mechanism on the vocabulary, the vocabulary), the mechanism built once to check it."""
    from textdp import mechanisms as registry

    if words > len(vocab):
        warn(f"--words {words} exceeds the vocabulary ({len(vocab)} words): using all of them")

    def factory(eps: float) -> WordMechanism:
        return registry.create(mechanism, vocab, epsilon=eps, **params)

    try:
        factory(first_epsilon)
    except (TypeError, ValueError) as exc:
        raise CLIError(one_line(exc)) from None
    return factory, vocab


def _data_words(input: Path, text_field: str, format: str | None, mechanism: str,
                epsilon: float, params: dict[str, Any], vocab: Vocabulary, *,
                entities: str | None, keep_stopwords: bool, words: int,
                rng: Any) -> tuple[Any, Any, dict[str, Any]]:
    """(the vocabulary rows to measure, their weights, what was measured) from INPUT's words."""
    from textdp.evaluation.data import data_words, read_batches
    from textdp.io.streams import display_name
    from textdp.spec import release_spec

    try:
        # No seed: the private texts are discarded, and the counts do not depend on the noise.
        spec = release_spec(mechanism, epsilon, vocabulary=vocab,
                            entities="default" if entities is None else entities,
                            keep_stopwords=keep_stopwords, **params)
    except (TypeError, ValueError) as exc:
        raise CLIError(one_line(exc)) from None
    say(f"reading the words of {display_name(input)} …")
    counted = data_words(read_batches(input, text_field=text_field, format=format), spec)
    try:
        ids, weights, selection = counted.select(words, rng)
    except ValueError as exc:
        raise FileError(display_name(input), None, one_line(exc)) from None
    measured_on = {"source": "data", "input": display_name(input),
                   "text_field": text_field, **counted.describe(), "selection": selection,
                   "weighted_by": "count in the data"}
    return ids, weights, measured_on


def _check_options(max_nw: float | None, min_sw: float | None, support: str, eta: float,
                   plot: Path | None, grid: str | None, grid_min: float, grid_max: float,
                   input: Path | None = None, format: str | None = None) -> list[float]:
    """Check the targets, the statistic, INPUT and the plot path; return the ε grid to search."""
    from textdp.evaluation.calibration import default_grid

    if input is not None:
        check_input(input, format)
        check_distinct({"input": input}, {"plot": plot})

    if max_nw is not None and not 0 < max_nw <= 1:
        raise CLIError(f"--max-nw must lie in (0, 1], got {max_nw:g}")
    if min_sw is not None and min_sw < 1:
        raise CLIError(f"--min-sw must be ≥ 1, got {min_sw:g}")
    if support not in ("distinct", "mass"):
        raise CLIError(f"--support must be 'distinct' or 'mass', got {support!r}")
    if not 0 < eta < 1:
        raise CLIError(f"--eta must lie in (0, 1), got {eta:g}")
    if plot is not None:
        if plot.suffix.lower() != ".png":
            raise FileError(plot, None, "--plot must name a .png file")
        check_target(plot, "plot")
        try:  # before the search: the results and the plot are written together, or neither
            import matplotlib  # noqa: F401
        except ImportError as exc:
            raise CLIError(f"cannot draw --plot: {one_line(exc)} (pip install matplotlib); "
                           "nothing was computed") from None
    if grid is not None:
        return parse_floats(grid, "--grid")
    if not (0 < grid_min < grid_max and math.isfinite(grid_max)):
        raise CLIError("--grid-min and --grid-max must satisfy 0 < min < max")
    return default_grid(grid_min, grid_max)


def _output(result: Calibration, vocab: Vocabulary, seed: int | None, draws: int,
            json_output: bool, plot: Path | None, measured_on: dict[str, Any]) -> None:
    """The JSON object, or the table and the verdict, on stdout, and the plot: one group, written
    together or not at all (stdout first: a closed pipe or a full disk there leaves the plot's
    file as it was)."""
    import contextlib
    import io

    from textdp.io import AtomicFiles

    data = result.to_dict()
    data["vocabulary"] = vocab.describe()
    data["seed"] = seed
    data["measured_on"] = measured_on
    if json_output:
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    else:
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer):
            if measured_on["source"] == "data":
                _data_lines(measured_on)
            _table(result, vocab, draws)
        text = buffer.getvalue()
    with AtomicFiles() as files:
        files.write_bytes("-", text.encode("utf-8"))
        if plot is not None:
            try:
                from textdp.evaluation.plots import calibration_plot

                with files.writing(plot) as tmp:
                    calibration_plot(data, tmp)
            except ImportError as exc:
                raise CLIError(f"cannot draw --plot: {one_line(exc)} (pip install matplotlib); "
                               "nothing was written (run again without --plot)") from None
    if plot is not None:
        say(f"plot: {plot}")


def _data_lines(m: dict[str, Any]) -> None:
    """What the data gave: documents, privatised words, the selection, what was not measured."""
    sel = m["selection"]
    how = ("all of them" if not sel["sampled"] else
           f"the {sel['most_frequent']:,} most frequent and {sel['sampled']:,} drawn uniformly "
           f"from the other {sel['sampled_from']:,}")
    cover = sel["measured_occurrences"] / max(sel["occurrences"], 1)
    typer.echo(f"measured on {m['input']}: {m['documents']:,} documents, "
               f"{m['privatized_words']:,} privatised words ({m['distinct_privatized_words']:,} "
               f"distinct); {sel['measured']:,} measured ({how}), {cover:.1%} of the "
               "occurrences; means weighted by count")
    apart = {k: v for k, v in m["not_privatized"].items()}
    if apart:
        typer.echo("not privatised, so not measured: "
                   + ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in apart.items()))
    if m["spans_by_kind"]:
        typer.echo("identifier and entity spans by kind: "
                   + ", ".join(f"{k} {v:,}" for k, v in m["spans_by_kind"].items()))


def _table(result: Calibration, vocab: Vocabulary, draws: int) -> None:
    typer.echo(f"{result.mechanism} on {vocab.name} ({len(vocab):,} words), "
               f"{len(result.words)} words × {draws} draws, "
               f"{result.method.replace('_', ' ')}"
               + (f", margin {result.margin:g} s.e." if result.method == "monte_carlo" else ""))
    typer.echo(result.table())
    typer.echo(result.describe())
    if not (result.monotone.get("max_n_w_nondecreasing", True)
            and result.monotone.get("min_s_w_nonincreasing", True)):
        typer.echo("note: N_w or S_w is not monotone in ε on this grid (see the table)")


calibrate.__doc__ = HELP
