"""What one ``textdp privatize`` run does, as one typed value, and the checks and messages every
engine shares.

:mod:`textdp.cli.privatize` parses and checks the command line, then builds one
:class:`PrivatizeArguments` — the release (a :class:`textdp.spec.ReleaseSpec`, built by
:func:`textdp.spec.release_spec`) and the I/O options — and hands it to one engine: local
(:mod:`textdp.cli._local`), Ray (:mod:`textdp.cli._ray`) or the language model
(:mod:`textdp.cli._prompt`). The engines import this module and nothing above it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textdp.cli._common import CLIError, count, one_line, say, warn
from textdp.io import ReadOptions, check_distinct, check_input, check_output, check_target
from textdp.io.streams import is_stdio
from textdp.io.uri import RemoteFile
from textdp.privacy.report import summary_line
from textdp.spec import ReleaseSpec

__all__ = ["PrivatizeArguments", "DEFAULT_BATCH_SIZE", "FilePath", "Inputs", "check_paths",
           "check_report_path", "read_options", "say_outcome", "say_written"]

DEFAULT_BATCH_SIZE = 2048

#: One file of a command line: a local path (``-``: standard input or output; a ``file://`` URI
#: is resolved to one), or a file or prefix of a remote pyarrow filesystem (``s3://``, ``gs://``:
#: ``--engine ray`` only).
FilePath = Path | RemoteFile
#: INPUT: one file (or a directory, a glob pattern, a prefix: expanded by ``--engine ray``), or
#: several INPUT files in the order given (``--engine ray`` only).
Inputs = FilePath | tuple[FilePath, ...]


@dataclass(frozen=True, slots=True)
class PrivatizeArguments:
    """One ``textdp privatize`` run, checked: built once from the parsed options; engines read
    it and never see the command line.

    Attributes:
        spec: the release (mechanism, ε, parameters, token policy, allocation, seed); frozen
            and picklable, so the Ray engine's actors receive it as it is.
        input, output, report, format: the paths (checked, nothing read yet) and the format of
            ``-``. ``input`` is a tuple when several INPUT files were given; ``input`` and
            ``output`` are :class:`~textdp.io.uri.RemoteFile` for URIs (``--engine ray`` only:
            the local and language-model engines get local paths).
        read_options: how records are read (text fields, delimiter, ``--on-error``, ``--null``).
        batch_size: documents per batch (the local engine; per window for Ray; per generation
            batch for the language model, where the command's default means the model's own).
        ledger, ledger_policy, budget: ``--ledger``, ``--ledger-policy``, ``--budget``.
        files: ``--engine ray`` only: the (input, output) file pairs (one per file of a
            directory or a glob pattern); None for the local and language-model engines.
        workers, ray_address, verbose: ``--engine ray`` only.
        model, device, resume: ``--mechanism dp_prompt`` only: the language model (None: the
            default), where it runs (``auto``, ``cpu``, ``cuda``), and whether the job stages
            its documents and continues from them (``--resume``).
    """

    spec: ReleaseSpec
    input: Inputs
    output: FilePath
    report: Path | None
    format: str | None
    read_options: ReadOptions
    batch_size: int = DEFAULT_BATCH_SIZE
    ledger: Path | None = None
    ledger_policy: str = "warn"
    budget: float | None = None
    files: tuple[tuple[FilePath, FilePath], ...] | None = None
    workers: int | None = None
    ray_address: str | None = None
    verbose: bool = False
    model: Path | None = None
    device: str = "auto"
    resume: bool = False


def check_paths(input: Path, output: Path, report: Path | None, format: str | None) -> None:
    """INPUT, OUTPUT and the report path, checked without reading or writing anything."""
    check_output(output, input, format)
    check_input(input, format)
    if report is not None:
        check_report_path(report, input, output)


def check_report_path(report: Path, input: FilePath | list[FilePath],
                      output: FilePath | None) -> None:
    """The report is neither the input nor the output (as files), and can be written."""
    check_distinct({"input": input}, {"output": output, "report": report})
    check_target(report, "report")


def read_options(text_fields: list[str] | None, delimiter: str | None, on_error: str,
                 null: str, max_line_bytes: int | None = None) -> ReadOptions:
    """The I/O options of the command line, checked (one-line errors)."""
    if on_error not in ("fail", "skip"):
        raise CLIError(f"--on-error must be fail or skip, got {on_error!r}")
    if null not in ("error", "pass"):
        raise CLIError(f"--null must be error or pass, got {null!r}")
    if delimiter in ("\\t", "tab"):
        delimiter = "\t"
    try:
        return ReadOptions(text_fields=tuple(text_fields or ("text",)), delimiter=delimiter,
                           on_error=on_error, null=null, max_line_bytes=max_line_bytes)
    except ValueError as exc:
        raise CLIError(one_line(exc)) from None


def say_outcome(io_summary: dict, output: FilePath, report: Path | None, result: dict) -> None:
    """Where the output and the report went, the guarantee in one line, and every warning."""
    say_written(io_summary, output)
    if report is not None:
        say(f"privacy report: {report}")
    else:
        say("no report file (add --report PATH to keep the full privacy report)")
    say(summary_line(result))
    for message in result.get("warnings", []):
        warn(message)
    if not result["guarantee"].get("verified", True):
        warn("no formal guarantee could be established for these parameters")


def say_written(io_summary: dict[str, Any], output: FilePath) -> None:
    """Where the records went, and how many malformed ones were skipped."""
    say(f"wrote {count(io_summary['records_out'], 'record')} to "
        f"{'standard output' if is_stdio(output) else output}")
    if io_summary.get("records_skipped"):
        # {"line": 7} for line-based files, {"row": 7} for Parquet: say which it is.
        unit, first = next(iter(io_summary["skipped"][0].items()))
        warn(f"{count(io_summary['records_skipped'], 'malformed record')} skipped (the first "
             f"at {unit} {first}; all are listed in the report)")
