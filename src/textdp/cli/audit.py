"""``textdp audit``: certified lower bounds on a word mechanism's ε, against its claims."""

from __future__ import annotations

import contextlib
import re
from pathlib import Path
from typing import Annotated

import typer

from textdp.cli._common import (
    BetaOption,
    CLIError,
    MethodOption,
    NeighborsOption,
    NListsOption,
    ParamOption,
    one_line,
    progress_bar,
    say,
    warn,
)
from textdp.cli._inputs import check_out_directory
from textdp.cli._vocabulary import VocabularyOption, resolve_vocabulary
from textdp.io import FileError, check_distinct
from textdp.io.paths import directory_outputs

__all__ = ["audit", "read_pairs"]

HELP = """Audit a word mechanism: certified lower bounds on the ε it spends on word pairs.

\b
For each word pair (a, b): --draws outputs from each word; on the first half, the
event (an output word or set of words) with the largest log-ratio in each direction;
on the other half, Clopper-Pearson bounds give L = ln(p_lo(M(a) in E) / p_hi(M(b) in E)),
a lower bound on the ε the pair spends that holds, for all pairs and both directions
together, with probability at least 1 - --alpha (Bonferroni). The claim is the
mechanism's privacy map at the pair's distance. L > claim is a certified violation;
otherwise "no evidence" — sampling can refute a guarantee, never prove one.

\b
--pairs closest (default): the --n-pairs pairs with the smallest claims (the nearest
words: the tightest guarantees); random: --n-pairs random pairs; or FILE: one pair per
line, two vocabulary words separated by whitespace or a comma (# comments allowed).

\b
Output: a Markdown table on stdout (word a, word b, distance, claim, certified lower
bound, the events, verdict) and a summary. --out DIR writes audit.json, audit.md and
audit.png (lower bound against claim per pair, with the line y = x). Exit status 0
whatever the verdict (the verdict is in the output), 2 on a user error, 130 when
interrupted. Time: dominated by --draws × (distinct words) mechanism calls; MVC on the
default vocabulary runs about 20,000 draws/s per 2 cores.

\b
Example:
  textdp audit --mechanism mvc --epsilon 10 --draws 100000 --out audit-mvc/
  textdp audit -m vickrey --epsilon 10 --pairs random --n-pairs 20 --seed 1
"""

_SEP = re.compile(r"[\s,]+")


def read_pairs(path: Path) -> list[tuple[str, str]]:
    """Word pairs from a UTF-8 file: two words per line (whitespace or comma), ``#`` comments
    and blank lines skipped. A malformed line is a FileError naming it."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise FileError(path, None, f"is not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise FileError(path, None, one_line(exc)) from None
    pairs = []
    for number, line in enumerate(lines, 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        words = [w for w in _SEP.split(text) if w]
        if len(words) != 2:
            raise FileError(path, number, f"expected two words, got {len(words)}")
        pairs.append((words[0], words[1]))
    if not pairs:
        raise FileError(path, None, "holds no word pairs")
    return pairs


#: What ``--out DIR`` receives.
WRITTEN = ("audit.json", "audit.md", "audit.png")


def _pairs_argument(pairs: str, out: Path | None) -> str | list[tuple[str, str]]:
    if pairs in ("closest", "random"):
        return pairs
    path = Path(pairs)
    if not path.exists():
        raise CLIError(f"--pairs must be closest, random or a file of word pairs; "
                       f"{pairs!r} is neither")
    # Before the audit runs: a pairs file inside --out under a name written is never replaced.
    check_distinct({"pairs file": path},
                   directory_outputs(out, WRITTEN, "--out") if out is not None else None)
    return read_pairs(path)


def audit(
    epsilon: Annotated[float, typer.Option(
        "--epsilon", metavar="EPSILON", show_default=False,
        help="Privacy parameter ε > 0 of the mechanism audited.")],
    mechanism: Annotated[str, typer.Option(
        "--mechanism", "-m", help="Mechanism name (see `textdp mechanisms`).")] = "mvc",
    pairs: Annotated[str, typer.Option(
        "--pairs", metavar="closest|random|FILE",
        help="Which word pairs: the closest, random ones, or a file of pairs.")] = "closest",
    n_pairs: Annotated[int, typer.Option(
        "--n-pairs", min=1, help="Pairs for --pairs closest or random.")] = 10,
    draws: Annotated[int, typer.Option(
        "--draws", min=2, help="Outputs drawn from each word (half choose, half certify).")]
        = 100_000,
    alpha: Annotated[float, typer.Option(
        "--alpha", help="Probability that any reported bound is wrong (split over pairs).")] = 0.05,
    seed: Annotated[int | None, typer.Option(
        "--seed", min=0, show_default=False,
        help="Seed for a reproducible audit (default: the secure random source).")] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", metavar="DIR", show_default=False,
        help="Write audit.json, audit.md and audit.png to DIR (created if missing; its parent "
             "must exist).")] = None,
    vocabulary: VocabularyOption = None,
    method: MethodOption = None, n_lists: NListsOption = None,
    beta: BetaOption = None, neighbors: NeighborsOption = None,
    param: ParamOption = None,
) -> None:
    from textdp.audit import audit as run_audit
    from textdp.cli._privatize_flags import mechanism_params
    from textdp.pipeline import build_mechanism

    check_out_directory(out)
    if not 0 < alpha < 1:
        raise CLIError(f"--alpha must lie strictly between 0 and 1, got {alpha:g}")
    chosen = _pairs_argument(pairs, out)
    params = mechanism_params(mechanism, {"method": method, "n_lists": n_lists, "beta": beta,
                                          "neighbors": neighbors}, param or [])
    try:
        mech = build_mechanism(mechanism, epsilon, resolve_vocabulary(vocabulary), params)
    except (ImportError, TypeError, ValueError) as exc:
        raise CLIError(one_line(exc)) from None
    bar = progress_bar("audit")(None, "draws")
    try:
        result = run_audit(mech, chosen, draws=draws, alpha=alpha, seed=seed, n_pairs=n_pairs,
                           progress=lambda done, total: _advance(bar, done, total))
    except (TypeError, ValueError) as exc:
        raise CLIError(one_line(exc)) from None
    finally:
        bar.close()
    _write(result, out)
    say(f"{result.draws_per_second:,.0f} draws/s, "
        f"{result.seconds:.1f} s")
    if out is not None:
        say(f"wrote {', '.join(str(out / name) for name in WRITTEN)}")
    if seed is not None:
        warn("seeded audit: reproducible, and as valid as an unseeded one only if the seed was "
             "not chosen after seeing results")


def _advance(bar, done: int, total: int) -> None:
    bar.total = total
    bar.update(done - bar.n)


def _write(result, out: Path | None) -> None:
    """The table on standard output and, with --out, the three files: one group, written
    together or not at all (standard output first: a closed pipe or a full disk there leaves
    --out as it was)."""
    from textdp.io.atomic import AtomicFiles

    made = out is not None and not out.exists()
    try:
        with AtomicFiles() as files:
            files.write_bytes("-", (result.markdown() + "\n").encode("utf-8"))
            if out is not None:
                out.mkdir(exist_ok=True)
                files.write_json(out / "audit.json", result.to_dict())
                files.write_bytes(out / "audit.md", (f"# Audit of {result.mechanism}\n\n"
                                                     + result.markdown()).encode("utf-8"))
                with files.writing(out / "audit.png") as tmp:
                    result.plot(tmp)
    except BaseException:
        if made:
            with contextlib.suppress(OSError):
                out.rmdir()  # the directory this run made, if still empty
        raise


audit.__doc__ = HELP
