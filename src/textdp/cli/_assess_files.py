"""What ``textdp assess`` does around the assessment: its options read into
:func:`textdp.assess`'s arguments (ε lists, release options, the input's fields), where the
reports go and how they are written, and its progress on stderr."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from textdp.cli._common import CLIError, say
from textdp.cli._privatize_flags import entity_options, identifier_options
from textdp.io import AtomicFiles, FileError, ReadOptions, format_of, open_records


def floats(value: str, what: str) -> list[float]:
    try:
        return [float(x) for x in value.split(",") if x.strip()]
    except ValueError:
        raise CLIError(f"{what} must be comma-separated numbers, got {value!r}") from None


def names(value: str) -> list[str]:
    return [x.strip() for x in value.split(",") if x.strip()]


def epsilons_option(values: list[str] | None) -> list[float] | dict[str, list[float]] | None:
    """``--epsilons 2,4,8`` (every mechanism) or, repeated, ``--epsilons mvc=2,4,8``."""
    if not values:
        return None
    common: list[float] | None = None
    per: dict[str, list[float]] = {}
    for value in values:
        name, sep, numbers = value.partition("=")
        if not sep:
            if common is not None:
                raise CLIError("--epsilons without a mechanism name is given once")
            common = floats(value, "--epsilons")
        elif name.strip() in per:
            raise CLIError(f"--epsilons gives {name.strip()!r} twice")
        else:
            per[name.strip()] = floats(numbers, f"--epsilons {name.strip()}")
    if common is not None and per:
        raise CLIError("--epsilons: give one list for every mechanism, or NAME=LIST per "
                       "mechanism, not both")
    return per or common


def read_fields(path: Path, text_field: str, fields: dict[str, str | None], format: str | None
          ) -> tuple[list[str], dict[str, list[str] | None]]:
    """The texts and, per named option, its field's values (labels, persons, sensitive
    values: strings, integers or booleans, read as text)."""
    named = {k: v for k, v in fields.items() if v is not None}
    if named and format_of(path, format) == "txt":
        raise CLIError(f"{', '.join(named)}: a .txt line is one document with no fields; use "
                       ".jsonl, .csv, .tsv or .parquet")
    for option, field in named.items():
        if field == text_field:
            raise CLIError(f"{option} must differ from --text-field")
    columns = list(dict.fromkeys([text_field, *named.values()]))
    texts: list[str] = []
    options = ReadOptions(text_fields=tuple(columns), scalar_fields=tuple(columns[1:]))
    with open_records(path, format=format, options=options) as reader:
        for batch in reader.batches(4096):
            texts += batch.texts
    k = len(columns)  # each record yields its fields in the order given
    return texts[0::k], {option: (None if field is None else texts[columns.index(field)::k])
                         for option, field in fields.items()}



def check_files(*paths: Path | None) -> None:
    """The candidates and the recoder exist (a one-line error before the data is read)."""
    for path in paths:
        if path is not None and not path.is_file():
            raise FileError(path, None, "does not exist or is not a file")


def release_options(oov: str | None, keep_stopwords: bool, entities: str | None,
                     allow_list: Path | None, identifiers: bool, deny_list: Path | None,
                     labels: list[str] | None, patterns: list[str] | None,
                     phone_regions: str | None) -> tuple[dict[str, Any], str]:
    """The release options every setting gets (only those given: the defaults stay the
    release's own), and the ``textdp privatize`` flags of those a row's options cannot spell
    (lists and files)."""
    import shlex

    options: dict[str, Any] = {}
    if oov is not None:
        if oov not in ("mask", "keep", "drop", "random"):
            raise CLIError(f"--oov must be mask, keep, drop or random, got {oov!r}")
        options["oov"] = oov
    if keep_stopwords:
        options["keep_stopwords"] = True
    ident = identifier_options(identifiers, labels, patterns, deny_list, phone_regions)
    ents = entity_options(entities, allow_list)
    if not identifiers:
        options["identifiers"] = False
    if entities is not None:
        options["entities"] = ents["entities"]
    for key, value in (("identifier_labels", ident["identifier_labels"]),
                       ("identifier_patterns", ident["identifier_patterns"]),
                       ("deny_list", ident["deny_list"]), ("phone_regions", ident["phone_regions"]),
                       ("allow_list", ents["allow_list"])):
        if value:
            options[key] = value
    flags = [f"--identifier-label {shlex.quote(x)}" for x in labels or []]
    flags += [f"--identifier-pattern {shlex.quote(x)}" for x in patterns or []]
    flags += [f"--{name} {shlex.quote(str(path))}" for name, path in
              (("deny-list", deny_list), ("allow-list", allow_list)) if path is not None]
    if phone_regions is not None:
        flags.append(f"--phone-regions {shlex.quote(phone_regions)}")
    return options, " ".join(flags)


def outputs(out: Path | None, json_path: Path | None, markdown_path: Path | None,
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


def write_reports(result: Any, targets: dict[str, Path], out: Path | None) -> None:
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
                data = frontier_png(result, result.meta.get("plot_privacy", "linkage"))
            files.write_bytes(path, data)


def progress(description: str, total: int) -> Any:
    """Per-setting progress on stderr: a bar on a terminal, else one line per setting when it
    ends (a log or a CI job sees the run advance too)."""
    if not sys.stderr.isatty():
        return LineProgress(description, total)
    from tqdm import tqdm

    return tqdm(total=total, unit="doc", desc=description, file=sys.stderr, leave=False,
                dynamic_ncols=True)


class LineProgress:
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
