"""Files named by URIs that pyarrow's filesystems understand (``s3://``, ``gs://``, ``hdfs://``,
``file://``): resolution, listing, and the hidden staging prefix of a job on an object store.

A URI is resolved once with :meth:`pyarrow.fs.FileSystem.from_uri` (credentials, region and
endpoint as pyarrow finds them: for S3 the AWS environment variables, ``~/.aws``, an instance
role; ``?endpoint_override=HOST:PORT&scheme=http`` in the URI for an S3-compatible server) into a
:class:`RemoteFile`: the filesystem and the path inside it. Readers and writers of every format
open a :class:`RemoteFile` through its filesystem (:mod:`textdp.io.streams`: raw bytes, textdp's
own decompression; Parquet with random access), so the formats behave exactly as on local files.
A ``file://`` URI is a local path (:func:`resolve` returns a :class:`~pathlib.Path`): local files
keep their atomic renames.

Object stores have no rename: :class:`RemoteStaging` writes a job's outputs under a hidden
prefix beside the output and moves them to their names only when every file succeeded
(``FileSystem.move``: on S3 a copy then a delete, one object at a time — see its docstring for
what a reader can see meanwhile).

pyarrow is imported when a URI is first resolved, not when this module is imported.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textdp.io.errors import FileError

__all__ = ["RemoteFile", "RemoteStaging", "check_remote_input", "is_uri", "list_inputs",
           "resolve"]

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
#: Characters that make the last part of a path a glob pattern (as :mod:`glob` reads them).
_GLOB = "*?["
#: The staging prefix of a job: hidden (never an input), named after the driver's process.
STAGE_PREFIX = ".textdp-ray-"


def is_uri(text: str | os.PathLike) -> bool:
    """Whether ``text`` is written as a URI (``scheme://…``), not a local path."""
    return isinstance(text, str) and _SCHEME.match(text) is not None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


@dataclass(frozen=True)
class RemoteFile(os.PathLike):
    """A file (or a prefix) on a pyarrow filesystem: ``filesystem`` (picklable: Ray workers
    receive it as it is and open the file themselves) and ``path`` inside it (``bucket/key``
    for S3). ``os.fspath`` gives ``scheme://path``, the name messages use (without the URI's
    query, which may hold an endpoint). ``size``: bytes, where a listing told it."""

    filesystem: Any = field(repr=False, compare=False)
    path: str
    scheme: str
    size: int | None = field(default=None, compare=False)
    #: What identifies the filesystem (its type and, for S3, its endpoint): two files are the
    #: same only on the same store.
    store: str = ""

    def __fspath__(self) -> str:
        return f"{self.scheme}://{self.path}"

    def __str__(self) -> str:
        return self.__fspath__()

    @property
    def name(self) -> str:
        return posixpath.basename(self.path.rstrip("/"))

    @property
    def parent(self) -> RemoteFile:
        return RemoteFile(self.filesystem, posixpath.dirname(self.path.rstrip("/")), self.scheme,
                          store=self.store)

    def child(self, name: str, size: int | None = None) -> RemoteFile:
        return RemoteFile(self.filesystem, f"{self.path.rstrip('/')}/{name}", self.scheme, size,
                          self.store)

    def info(self) -> Any:
        """The file's :class:`pyarrow.fs.FileInfo` (a refused access is a :class:`FileError`)."""
        try:
            return self.filesystem.get_file_info(self.path)
        except OSError as exc:
            raise FileError(self, None, f"cannot be read ({_one_line(exc)})") from None

    def byte_size(self) -> int | None:
        return self.size if self.size is not None else self.info().size

    def open_input(self) -> Any:
        """A sequential stream of the raw bytes (no decompression by pyarrow: textdp's own
        decompression checks truncated frames and names the file)."""
        return self._read(self.filesystem.open_input_stream, compression=None)

    def open_input_file(self) -> Any:
        """A random-access file (Parquet reads its footer first)."""
        return self._read(self.filesystem.open_input_file)

    def _read(self, opener: Any, **options: Any) -> Any:
        try:
            return opener(self.path, **options)
        except FileNotFoundError:
            raise FileError(self, None, "no such file") from None
        except OSError as exc:
            raise FileError(self, None, f"cannot be read ({_one_line(exc)})") from None

    def open_output(self) -> Any:
        """A stream writing the object (on S3 it appears when the stream is closed)."""
        try:
            return self.filesystem.open_output_stream(self.path, compression=None)
        except OSError as exc:
            raise FileError(self, None, f"cannot be written ({_one_line(exc)})") from None

    def delete(self) -> None:
        """Remove the file if it is there (best effort: a cleanup must not hide the error that
        caused it)."""
        try:
            self.filesystem.delete_file(self.path)
        except OSError:
            pass


def resolve(text: str | os.PathLike) -> Path | RemoteFile:
    """A command-line path: a local :class:`~pathlib.Path` (a ``file://`` URI included), or a
    :class:`RemoteFile` for any other URI pyarrow understands.

    Raises:
        FileError: one line naming the URI and the problem (an unknown scheme, pyarrow built
            without that filesystem, a malformed URI).
    """
    if not is_uri(text):
        return Path(text)
    text = str(text)
    scheme = text.split("://", 1)[0].lower()
    shown = text.split("?", 1)[0]  # the query may hold an endpoint or options, not the name
    try:
        from pyarrow.fs import FileSystem, LocalFileSystem

        filesystem, path = FileSystem.from_uri(text)
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        raise FileError(shown, None, "a URI needs pyarrow (pip install pyarrow)") from None
    except Exception as exc:  # noqa: BLE001 - ArrowInvalid, ArrowNotImplementedError, OSError
        raise FileError(shown, None, f"cannot use this URI ({_one_line(exc)})") from None
    if isinstance(filesystem, LocalFileSystem):
        return Path(path)
    store = f"{filesystem.type_name}:{getattr(filesystem, 'endpoint_override', '') or ''}"
    return RemoteFile(filesystem, path.rstrip("/"), scheme, store=store)


def check_remote_input(file: RemoteFile, fmt: str, compression: str | None) -> None:
    """:func:`textdp.io.check_input` for a remote file: a file (not a prefix), not empty."""
    if fmt == "parquet" and compression:
        raise FileError(file, None, "a Parquet file is compressed inside; drop the "
                                    f"{posixpath.splitext(file.path)[1]} extension")
    if file.size is not None:
        size = file.size
    else:
        info = file.info()
        type_name = info.type.name
        if type_name == "NotFound":
            raise FileError(file, None, "no such file")
        if type_name == "Directory":
            raise FileError(file, None, "is a directory (a prefix), expected a file")
        size = info.size
    if size == 0:
        raise FileError(file, None, "empty file (0 bytes)")


def _listing(prefix: RemoteFile) -> list[Any]:
    """The entries directly under ``prefix``, in name order."""
    from pyarrow.fs import FileSelector

    try:
        entries = prefix.filesystem.get_file_info(FileSelector(prefix.path, recursive=False))
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise FileError(prefix, None, f"cannot be listed ({_one_line(exc)})") from None
    return sorted(entries, key=lambda e: e.base_name)


def list_inputs(uri: RemoteFile, format: str | None, check: Any) -> tuple[list[RemoteFile], bool]:
    """The input files a URI names, in name order, and whether it named several (a prefix or a
    pattern: the output is then a prefix too).

    The rules of :func:`textdp.io.directory_inputs`: a prefix gives the files directly under it
    (names starting with '.' are hidden, not inputs); every other entry must be an input file
    (``check(file, format)``, e.g. :func:`textdp.io.check_input`), or the listing is an error
    naming it. A pattern (``*``, ``?``, ``[…]``) may be in the last part only, and matches as
    :mod:`glob` does (hidden names only when the pattern starts with '.').

    Raises:
        FileError: no such object or prefix; a refused listing (credentials); an entry that
            is not an input; a pattern matching nothing.
    """
    base = uri.name
    if any(c in base for c in _GLOB):
        if any(c in uri.parent.path for c in _GLOB):
            raise FileError(uri, None, "a pattern may only be in the last part of a URI")
        entries = [e for e in _listing(uri.parent)
                   if fnmatch.fnmatchcase(e.base_name, base)
                   and (base.startswith(".") or not e.base_name.startswith("."))
                   and e.type.name == "File"]
        if not entries:
            raise FileError(uri, None, "matches no file")
        files = [uri.parent.child(e.base_name, e.size) for e in entries]
        for f in files:
            check(f, format)
        return files, True
    info = uri.info()
    kind = info.type.name
    if kind == "File":
        one = RemoteFile(uri.filesystem, uri.path, uri.scheme, info.size, uri.store)
        check(one, format)
        return [one], False
    if kind != "Directory":
        raise FileError(uri, None, "no such file or prefix")
    files = []
    for entry in _listing(uri):
        if entry.base_name.startswith("."):
            continue
        one = uri.child(entry.base_name, entry.size)
        if entry.type.name != "File":
            raise FileError(one, None, "is a prefix (an input prefix must hold input files "
                                       "only; names starting with '.' are ignored)")
        try:
            check(one, format)
        except FileError as exc:
            raise FileError(one, None, f"{exc.problem} (an input prefix must hold input files "
                                       "only; names starting with '.' are ignored)") from None
        files.append(one)
    if not files:
        raise FileError(uri, None, "has no file to read")
    return files, True


def check_output_prefix(output: RemoteFile) -> None:
    """The output prefix of several files: inside a bucket (the staging prefix goes beside
    it), not an object, and new or empty."""
    if "/" not in output.path.strip("/"):
        raise FileError(output, None, "is a bucket; give a prefix inside it (the job stages "
                                      "its files beside the output)")
    kind = output.info().type.name
    if kind == "File":
        raise FileError(output, None, "is a file; the output of several files is a prefix")
    if kind == "Directory" and _listing(output):
        raise FileError(output, None, "exists and is not empty; give a new or empty output "
                                      "prefix")


def check_output_file(output: RemoteFile, input: Any) -> None:
    """The output object of one file: not a prefix, not the input itself."""
    if output.info().type.name == "Directory":
        raise FileError(output, None, "is a directory (a prefix), expected a file name")
    if isinstance(input, RemoteFile) and input == output:
        raise FileError(output, None, "the output would overwrite the input; give the output "
                                      "its own name")


class RemoteStaging:
    """A job's outputs on an object store, all or nothing as far as the store allows.

    Every output is written under a hidden prefix beside the output, ``.textdp-ray-PID-RANDOM/``
    (:meth:`path_for`); :meth:`commit` moves them to their names once every file succeeded,
    then deletes the prefix; :meth:`abort` deletes the prefix. Object stores have no rename:
    ``move`` is a copy and a delete per object, so the outputs appear one after the other during
    the commit (a reader listing the output prefix meanwhile can see some of them), and a commit
    that fails part-way deletes the outputs it had moved (best effort). A driver killed outright
    leaves its staging prefix (and, killed during the commit, the outputs moved so far); it
    holds nothing but outputs, and may be deleted.
    """

    def __init__(self, beside: RemoteFile) -> None:
        self.prefix = beside.parent.child(f"{STAGE_PREFIX}{os.getpid()}-{os.urandom(4).hex()}")
        self.moves: list[tuple[RemoteFile, RemoteFile]] = []

    def path_for(self, index: int, target: RemoteFile) -> RemoteFile:
        """Where the output ``target`` (the ``index``-th of the job) is staged."""
        return self.prefix.child(f"{index:06d}-{target.name}")

    def commit(self) -> None:
        """Move every staged file of :attr:`moves` to its target, in order; then delete the
        staging prefix."""
        done: list[RemoteFile] = []
        try:
            for staged, target in self.moves:
                try:
                    staged.filesystem.move(staged.path, target.path)
                except OSError as exc:
                    raise FileError(target, None, f"cannot be written ({_one_line(exc)})"
                                    ) from None
                done.append(target)
        except BaseException:
            for target in done:
                target.delete()
            raise
        finally:
            self.abort()

    def abort(self) -> None:
        """Delete the staging prefix and everything under it (best effort)."""
        try:
            self.prefix.filesystem.delete_dir(self.prefix.path)
        except OSError:
            pass
