"""``textdp vocab list`` and ``textdp vocab stats NAME``: the named vocabularies and their geometry."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from textdp.cli._common import CLIError, one_line, say

app = typer.Typer(
    name="vocab", help="Named vocabularies: list them, measure their geometry.",
    no_args_is_help=True, add_completion=False, rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


@app.command("list")
def list_vocabularies(
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")] = False,
) -> None:
    """The named vocabularies: size, dimension, source, whether cached, fingerprint when cached.

    Nothing is downloaded: a vocabulary that is not cached shows no fingerprint yet (textdp
    computes it when it first loads the vocabulary).
    """
    from textdp.vocab import describe_all

    rows = describe_all()
    if json_output:
        sys.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return
    width = max(len(r["name"]) for r in rows)
    typer.echo(f"{'name':<{width}}  {'size':>7}  {'dim':>3}  {'cached':<7}  fingerprint")
    for r in rows:
        fp = r["fingerprint"][:16] if r["fingerprint"] else "-"
        typer.echo(f"{r['name']:<{width}}  {r['size']:>7,}  {r['dimension']:>3}  "
                   f"{r['cached']:<7}  {fp}")
        typer.echo(f"{'':<{width}}  source: {r['source']}; licence: {r['licence']}")


@app.command("stats")
def stats(
    name: Annotated[str, typer.Argument(metavar="NAME", help="A name from `textdp vocab list`.")],
    plot: Annotated[Path | None, typer.Option(
        "--plot", metavar="FILE.png", show_default=False,
        help="Write a PNG of d_k against k with the percentile bands.")] = None,
    json_path: Annotated[Path | None, typer.Option(
        "--json", metavar="FILE", show_default=False, help="Write the numbers as JSON.")] = None,
    sample: Annotated[int | None, typer.Option(
        "--sample", min=1, show_default=False,
        help="Query only N random words (their neighbours are still exact among all words); "
             "for large vocabularies.")] = None,
    seed: Annotated[int | None, typer.Option(
        "--seed", min=0, show_default=False, help="Seed of --sample.")] = None,
) -> None:
    """Distance from each word to its k-th nearest other word, k = 1 … 1000 (MVC, Fig. 1).

    Prints a Markdown table on stdout: one row per k, the 5th/20th/50th/80th/95th percentiles
    over words and the mean. A mechanism that is ε-DP per unit of distance makes a word and its
    k-th neighbour (ε·d_k)-indistinguishable. The search is exact; every word is queried
    unless --sample is given.
    """
    from textdp import _random
    from textdp.cli._vocabulary import resolve_vocabulary
    from textdp.io import AtomicFiles, FileError, check_distinct, check_target
    from textdp.vocab.geometry import neighbor_distances, plot_neighbor_distances

    check_distinct(None, {"plot": plot, "JSON output": json_path})
    for path, suffix in ((plot, ".png"), (json_path, None)):
        if path is not None:
            if suffix and path.suffix.lower() != suffix:
                raise FileError(path, None, f"--plot must name a {suffix} file")
            check_target(path, "plot" if suffix else "JSON output")
    vocab = resolve_vocabulary(name)
    say(f"exact k-NN of {sample or len(vocab):,} words of {name} ({len(vocab):,} × {vocab.dim})")
    try:
        result = neighbor_distances(vocab, sample=sample, rng=_random.generator(seed))
    except ValueError as exc:
        raise CLIError(one_line(exc)) from None
    with AtomicFiles() as files:  # the table, the plot and the JSON: together or not at all
        files.write_bytes("-", (stats_markdown(name, result, seed) + "\n").encode("utf-8"))
        if plot is not None:
            with files.writing(plot) as tmp:
                plot_neighbor_distances(result, tmp)
        if json_path is not None:
            files.write_json(json_path, result.to_dict() | {"seed": seed})
    say(f"{result.seconds:.1f} s" + (f"; plot: {plot}" if plot else "")
        + (f"; JSON: {json_path}" if json_path else ""))


def stats_markdown(name: str, result, seed: int | None) -> str:
    voc = result.vocabulary
    queried = (f"{result.n_words:,} words drawn uniformly (seed {seed})" if result.sample
               else f"all {voc['size']:,} words")
    lines = [f"## {name}: distance to the k-th nearest word",
             "",
             f"{voc['size']:,} words × {voc['dimension']} dimensions (`{voc['name']}`, fingerprint "
             f"`{voc['fingerprint'][:16]}…`); queried: {queried}; exact search, the word itself "
             f"excluded. Percentiles over words of the Euclidean distance d_k.",
             "",
             result.markdown(),
             "",
             f"Command: `textdp vocab stats {name}"
             + (f" --sample {result.sample} --seed {seed}" if result.sample else "") + "`"]
    lines += [f"Note: {n}" for n in result.notes]
    return "\n".join(lines)
