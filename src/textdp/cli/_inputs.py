"""INPUT... and OUTPUT of the commands that read files, resolved and checked in one place
(issue 33): ``privatize``, ``embed``, ``docembed`` (one file, or with ``--engine ray`` a
directory, a quoted glob pattern, several files or a URI of a pyarrow filesystem) and ``assess``,
``synthesize`` (one local file).

Everything here runs before anything is read or written, and every refusal is one line (exit
status 2): an empty argument, standard input among several INPUTs, what the local engine cannot
read (several files, a URI), two paths that are one file however they are spelled
(:func:`textdp.io.check_distinct`), an input that is no input file, an output that exists or
whose directory does not. :func:`resolve_files` is the sequence the three release commands share,
each with its :class:`InputRules`; :func:`check_single` is that of a command of one local INPUT.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textdp.cli._arguments import check_paths, check_report_path
from textdp.cli._common import CLIError, check_new_file
from textdp.io import FileError, check_distinct, check_input, check_output, directory_inputs
from textdp.io.streams import is_stdio
from textdp.io.uri import (
    RemoteFile,
    check_output_file,
    check_output_prefix,
    check_remote_input,
    is_uri,
    list_inputs,
    resolve,
)

__all__ = ["InputRules", "Resolved", "check_engine", "check_out_directory", "check_single",
           "file_check", "glob_inputs", "local", "resolve_files", "resolve_paths"]

def resolve_paths(inputs: list[str], output: str, engine: str
                  ) -> tuple[list[Path | RemoteFile], Path | RemoteFile]:
    """INPUT... and OUTPUT as given on the command line: local paths (a ``file://`` URI is one),
    or :class:`~textdp.io.uri.RemoteFile` for a URI of another pyarrow filesystem (``s3://``,
    ``gs://``, …), resolved without reading anything. The local engine reads one local file:
    several INPUTs, or a URI, are refused in one line."""
    # Path("") is ".": an empty argument (an unset shell variable) would be named "." after.
    if any(not p.strip() for p in inputs):
        raise CLIError("INPUT is an empty string: give a file (or - for standard input)")
    if not output.strip():
        raise CLIError("OUTPUT (-o) is an empty string: give a file (or - for standard output)")
    if len(inputs) > 1 and any(is_stdio(p) for p in inputs):
        raise CLIError("- (standard input) must be the only INPUT")
    if engine == "local":  # before resolving: resolving an s3:// URI asks the bucket's region
        if len(inputs) > 1:
            raise CLIError("several INPUT files need --engine ray")
        for p in (*inputs, output):
            if is_uri(p) and not p.lower().startswith("file://"):
                raise CLIError(f"{p.split('?', 1)[0]}: a URI needs --engine ray")
    return [resolve(p) for p in inputs], resolve(output)


def local(path: Any) -> bool:
    """Whether ``path`` is a local path (or ``-``), not a file of a remote filesystem."""
    return not isinstance(path, RemoteFile)


def _check_privatize_pair(src: Path | RemoteFile, output: Path | RemoteFile,
                          report: Path | None, format: str | None) -> None:
    """``privatize``'s one input file and its output file (local or remote)."""
    if local(src) and local(output):
        check_paths(src, output, report, format)
        return
    check_output(output, src, format)
    check_input(src, format)
    if not local(output):
        check_output_file(output, src)


@dataclass(frozen=True, kw_only=True)
class InputRules:
    """What a command reads and writes with ``--engine ray``, for :func:`check_engine`:
    ``check(file, format)`` accepts one input file (raises a one-line FileError otherwise;
    local or :class:`~textdp.io.uri.RemoteFile`), ``output_name(file)`` names its output in the
    output directory or prefix of several files, and ``check_pair(input, output, report, format)``
    checks one input file and its output file. The default: ``privatize``'s."""

    check: Callable[[Any, str | None], object] = check_input
    output_name: Callable[[Any], str] = lambda file: file.name
    check_pair: Callable[[Any, Any, Path | None, str | None], None] = _check_privatize_pair


def check_engine(engine: str, workers: int | None, address: str | None,
                 inputs: list[Path | RemoteFile], output: Path | RemoteFile, report: Path | None,
                 format: str | None, rules: InputRules = InputRules()  # noqa: B008 - frozen
                 ) -> list[tuple[Any, Any]] | None:
    """The paths, checked without reading or writing anything: None for the local engine; for
    Ray, the (input, output) file pairs: one input file gives one output file; a directory, a
    glob pattern, a URI prefix or several INPUTs give their files (each in name order, the
    INPUTs in the order given) and the files ``rules.output_name`` names in the output directory
    (or prefix), which must be new or hold none of those names (a prefix: new or empty).
    ``privatize``, ``embed`` and ``docembed`` share it, each with its :class:`InputRules`."""
    if engine == "local":
        if workers is not None or address is not None:
            raise CLIError("--workers and --ray-address need --engine ray")
        rules.check_pair(inputs[0], output, report, format)
        return None
    if engine != "ray":
        raise CLIError(f"--engine must be local or ray, got {engine!r}")
    locals_ = [p for p in inputs if local(p)]
    if report is not None:
        check_report_path(report, locals_, output if local(output) else None)
    files: list[Any] = []
    many = len(inputs) > 1
    for given in inputs:
        found, several = _expand(given, format, rules.check)
        files += found
        many = many or several
    if not many:  # one file in, one file out
        rules.check_pair(files[0], output, report, format)
        return [(files[0], output)]
    if is_stdio(output):
        raise CLIError("the output of several files is a directory (or a URI prefix), not -")
    names: dict[str, Any] = {}
    for f in files:
        name = rules.output_name(f)
        if name in names:
            raise FileError(f, None, f"gives the output name {name!r}, as {names[name]} does: "
                                     "the output directory would hold both under one name")
        names[name] = f
    if not local(output):
        check_output_prefix(output)
        return [(f, output.child(name)) for name, f in names.items()]
    if output.exists() and not output.is_dir():
        raise FileError(output, None, "is a file; the output of several files is a directory")
    check_distinct({"input": locals_}, {"output": output})  # as files, not as names
    if not output.parent.is_dir():
        raise FileError(output, None, f"directory {str(output.parent)!r} does not exist")
    taken = [name for name in names if (output / name).exists()]
    if taken:
        raise FileError(output / taken[0], None, "exists; give a new or empty output directory")
    return [(f, output / name) for name, f in names.items()]


def _expand(given: Path | RemoteFile, format: str | None,
            check: Callable[[Any, str | None], object]) -> tuple[list[Any], bool]:
    """The input files one INPUT names (each accepted by ``check``), and whether it named
    several (a directory, a pattern, a prefix) rather than one file."""
    if not local(given):
        return list_inputs(given, format, check)
    if is_stdio(given):
        return [given], False
    pattern = not given.exists() and any(c in str(given) for c in "*?[")
    if pattern:
        return glob_inputs(given, format, check), True
    if given.is_dir():
        return directory_inputs(given, format, check), True
    return [given], False


def glob_inputs(pattern: Path, format: str | None,
                check: Callable[[Any, str | None], object] = check_input) -> list[Path]:
    """The files a glob pattern (``'data/*.jsonl'``, quoted for the shell) names, in name order:
    each must be an input file (``check``: by default :func:`textdp.io.check_input`)."""
    import glob

    files = sorted(Path(p) for p in glob.glob(str(pattern)))
    if not files:
        raise FileError(pattern, None, "matches no file")
    for f in files:
        check(f, format)
    return files


def refuse_stdin(engine: str, inputs: list[Any]) -> None:
    """A worker cannot open standard input: refused in one line with ``--engine ray``."""
    if engine == "ray" and any(is_stdio(p) for p in inputs):
        raise CLIError("--engine ray: the workers read files, not standard input (save the input "
                       "to a file first, or use --engine local)")


def file_check(suffixes: tuple[str, ...]) -> Callable[[Any, str | None], None]:
    """``InputRules.check`` of vector (or text) files: one of ``suffixes``, a non-empty file
    (local, or a :class:`~textdp.io.uri.RemoteFile`)."""
    def check(path: Any, format: str | None = None) -> None:
        suffix = posixpath.splitext(os.fspath(path))[1].lower()
        if suffix not in suffixes:
            raise FileError(path, None, f"not an input file of type {', '.join(suffixes)}")
        if isinstance(path, RemoteFile):
            check_remote_input(path, suffix, None)
        elif not path.is_file():
            raise FileError(path, None, "no such file" if not path.exists() else
                            "not a regular file")
        elif path.stat().st_size == 0:
            raise FileError(path, None, "empty file (0 bytes)")

    return check


def check_remote_pair(src: Any, dst: Any, check: Callable[[Any, str | None], object],
                      output_suffixes: tuple[str, ...]) -> None:
    """One input file and its output file of ``embed`` or ``docembed`` where either is a URI
    (both local: the command's own checks, as the local engine's)."""
    check(src, None)
    suffix = posixpath.splitext(os.fspath(dst))[1].lower()
    if suffix not in output_suffixes:
        raise FileError(dst, None, f"unsupported output type {suffix or '(none)'!r}; use "
                                   f"{' or '.join(output_suffixes)}")
    if isinstance(dst, RemoteFile):
        check_output_file(dst, src)
    else:
        check_new_file(dst, "output")


@dataclass(frozen=True)
class Resolved:
    """What :func:`resolve_files` found: ``inputs`` as given (resolved), ``input`` (the one path,
    or the tuple of several) and ``output``."""

    inputs: list[Any]
    input: Any
    output: Any


def resolve_files(inputs: list[str], output: str, engine: str, *, sources: Mapping[str, Any],
                  targets: Mapping[str, Any], workers_read_stdin: bool = True) -> Resolved:
    """The first checks of ``privatize``, ``embed`` and ``docembed``, in the order a user meets
    them: INPUT... and OUTPUT resolved (:func:`resolve_paths`); standard input refused where
    the Ray workers would have to read it (``workers_read_stdin`` False); no two paths one file
    (``sources``: the command's other inputs by name, ``targets``: its other outputs; the local
    INPUTs and OUTPUT are added). The engine and its file pairs come next
    (:func:`check_engine`, after the command's own option checks)."""
    given, out = resolve_paths(inputs, output, engine)
    if not workers_read_stdin:
        refuse_stdin(engine, given)
    check_distinct({"input": [p for p in given if local(p)], **sources},
                   {"output": out if local(out) else None, **targets})
    return Resolved(given, given[0] if len(given) == 1 else tuple(given), out)


def check_single(input: Path, targets: Mapping[str, Any], format: str | None = None, *,
                 read: bool = True) -> None:
    """A command of one local INPUT (``assess``, ``synthesize``): none of ``targets`` is the
    input, however spelled; with ``read``, the input is an input file
    (:func:`textdp.io.check_input`: exists, a regular file, not empty, a known format)."""
    check_distinct({"input": input}, targets)
    if read:
        check_input(input, format)


def check_out_directory(out: Path | None) -> None:
    """``--out DIR`` of a command that writes a folder (``audit``, ``audit-synthesize``): absent
    or a directory, in a directory that exists."""
    if out is None:
        return
    if out.exists() and not out.is_dir():
        raise FileError(out, None, "exists and is not a directory")
    if not out.absolute().parent.is_dir():
        raise FileError(out, None, f"directory {str(out.parent)!r} does not exist")
