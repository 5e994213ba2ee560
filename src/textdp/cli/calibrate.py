"""``textdp calibrate``: the ε range meeting worst-case plausible deniability targets."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from textdp.cli._help import calibrate as opt
from textdp.cli._options import DataTextFieldOpt, parse_floats
from textdp.cli._privatize_flags import EntitiesOption, FormatOption
from textdp.cli._vocabulary import VocabularyOption, resolve_vocabulary
from textdp.io import FileError, check_distinct, check_input, check_target

if TYPE_CHECKING:
    from textdp.evaluation.calibration import Calibration
    from textdp.mechanisms.base import WordMechanism
    from textdp.vocab import Vocabulary

__all__ = ["NO_EPSILON_MEETS_TARGETS", "calibrate"]

#: Exit status when no ε of the grid meets the targets (2 is a user error, 1 an internal one).
NO_EPSILON_MEETS_TARGETS = 3


def calibrate(input: opt.InputArg = None, text_field: DataTextFieldOpt = "text",
              format: FormatOption = None, entities: EntitiesOption = None,
              keep_stopwords: opt.KeepStopwordsOpt = False, mechanism: opt.MechanismOpt = "mvc",
              max_nw: opt.MaxNwOpt = 0.5, min_sw: opt.MinSwOpt = 50.0, words: opt.WordsOpt = 200,
              draws: opt.DrawsOpt = 1000, grid: opt.GridOpt = None, grid_min: opt.GridMinOpt = 0.01,
              grid_max: opt.GridMaxOpt = 100.0, refine: opt.RefineOpt = 5,
              margin: opt.MarginOpt = None, support: opt.SupportOpt = "distinct",
              eta: opt.EtaOpt = 0.01, vocabulary_size: opt.VocabularySizeOpt = None,
              vocabulary: VocabularyOption = None, seed: opt.SeedOpt = None,
              method: MethodOption = None, n_lists: NListsOption = None, beta: BetaOption = None,
              param: ParamOption = None, json_output: opt.JsonOpt = False,
              plot: opt.PlotOpt = None) -> int:
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
    factory = _factory(mechanism, params, vocab, words if input is None else 1, eps_grid[0])
    measured, weights, measured_on = _measured(
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
    _output(result, vocab, seed, json_output, plot, measured_on)
    if result.epsilon is None:
        warn("no ε in the searched grid meets the targets")
        return NO_EPSILON_MEETS_TARGETS
    return 0


def _factory(mechanism: str, params: dict[str, Any], vocab: Vocabulary, words: int,
             first_epsilon: float) -> Callable[[float], WordMechanism]:
    """ε → the mechanism on the vocabulary, built once to check it."""
    from textdp import mechanisms as registry

    if words > len(vocab):
        warn(f"--words {words} exceeds the vocabulary ({len(vocab)} words): using all of them")

    def factory(eps: float) -> WordMechanism:
        return registry.create(mechanism, vocab, epsilon=eps, **params)

    try:
        factory(first_epsilon)
    except (TypeError, ValueError) as exc:
        raise CLIError(one_line(exc)) from None
    return factory


def _measured(input: Path | None, text_field: str, format: str | None, mechanism: str,
              epsilon: float, params: dict[str, Any], vocab: Vocabulary, *,
              entities: str | None, keep_stopwords: bool, words: int,
              rng: Any) -> tuple[Any, Any, dict[str, Any]]:
    """(the vocabulary rows to measure, their weights, what was measured): a sample of the
    vocabulary, or INPUT's words."""
    if input is None:
        return min(words, len(vocab)), None, {"source": "vocabulary sample",
                                              "vocabulary_words": len(vocab)}
    from textdp.evaluation.data import words_of_file
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
    return words_of_file(input, spec, text_field=text_field, format=format, words=words, rng=rng)


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


def _output(result: Calibration, vocab: Vocabulary, seed: int | None, json_output: bool,
            plot: Path | None, measured_on: dict[str, Any]) -> None:
    """The JSON object, or the table and the verdict, on stdout, and the plot: one group, written
    together or not at all (stdout first: a closed pipe or a full disk there leaves the plot's
    file as it was)."""
    from textdp.evaluation.data import measured_on_text
    from textdp.io import AtomicFiles

    data = {**result.to_dict(), "vocabulary": vocab.describe(), "seed": seed,
            "measured_on": measured_on}
    if json_output:
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    else:
        text = (measured_on_text(measured_on) if measured_on["source"] == "data" else "") \
            + result.text(vocab)
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


calibrate.__doc__ = opt.HELP
