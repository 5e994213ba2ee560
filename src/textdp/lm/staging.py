"""The staged work of a resumable DP-Prompt job (``textdp privatize -m dp_prompt --resume``).

A :class:`Stage` is a side file of JSON lines beside the output: a header naming the job —
the sha256 of its input fingerprint, mechanism parameters, model, masking policy and seed
(:func:`stage_key`) — and the ledger release it belongs to, then one line per generated
document (its position, its paraphrase, how many tokens, whether it stopped at EOS). Each
batch's lines are appended and fsync'ed before the batch is written to the (staged, atomic)
output, so a job stopped at any point keeps every document it generated up to its last whole
batch; a torn last line (a stop while appending) is ignored.

Resuming, and why it releases nothing more. The output of DP-Prompt on a corpus is, for each
document i, one draw of the mechanism on document i (Utpala et al. 2023, Thm. 1: ε-DP per
document, for any two documents). A resumed job takes the staged documents as they are — their
noise is never drawn again — and generates only the others, each once. So, whatever the stops,
every document's paraphrase is one draw, and the committed output has the law of one
uninterrupted run: one release, ε per document once. (Drawing a staged document again would be
a second release of it: 2ε under sequential composition, and a way to pick the better of two
draws.) A seeded job generates exactly what the uninterrupted run would have; an unseeded one
draws the remaining documents from the secure generator.

The staged file holds released paraphrases (never input text), so it counts as output: under a
ledger, the release's pending line stays (counted) once a document is staged, whatever happens
next, and the resumed job completes that same release instead of recording a new one
(:meth:`textdp.ledger.Ledger.release`, ``resumes``). The side file is removed once the output is
committed.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["STAGE_SUFFIX", "Stage", "StageError", "stage_key", "stage_path"]

STAGE_SUFFIX = ".dp_prompt-stage.jsonl"
_FORMAT = "textdp.stage/1"


class StageError(ValueError):
    """A staged job that cannot be continued (another job's, or unreadable): one line."""


def stage_path(output: str | os.PathLike) -> Path:
    """The side file of the job writing ``output``: ``<output>.dp_prompt-stage.jsonl``."""
    output = Path(output)
    return output.with_name(output.name + STAGE_SUFFIX)


def stage_key(**job: Any) -> str:
    """The sha256 naming a job: everything that fixes each document's paraphrase law and its
    draws (input fingerprint, mechanism parameters, model sha256, masking policy, seed)."""
    text = json.dumps(job, sort_keys=True, default=str, ensure_ascii=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Stage:
    """The side file at ``path`` of the job ``key`` (:func:`stage_key`); read at once when it
    exists (:class:`StageError` when it belongs to another job)."""

    def __init__(self, path: str | os.PathLike, key: str) -> None:
        self.path, self.key = Path(path), key
        #: The ledger release the staged documents belong to (None: no ledger).
        self.release: str | None = None
        self._docs: dict[int, dict[str, Any]] = {}
        self._file: Any = None
        if self.path.exists():
            self._read()

    def __len__(self) -> int:
        return len(self._docs)

    def _read(self) -> None:
        try:
            lines = self.path.read_bytes().split(b"\n")
        except OSError as exc:
            raise StageError(f"staged job {self.path}: {exc.strerror or exc}") from None
        try:
            head = json.loads(lines[0])
        except ValueError:
            head = None
        if not isinstance(head, dict) or head.get("format") != _FORMAT:
            raise StageError(f"{self.path} is not a staged textdp job; move it away to start "
                             "afresh")
        if head.get("key") != self.key:
            raise StageError(f"{self.path} was staged by another job (another input, "
                             "mechanism, model, masking policy or seed); remove it to start "
                             "afresh, or run the job that staged it")
        self.release = head.get("release")
        for line in lines[1:]:
            try:
                record = json.loads(line)
                self._docs[int(record["i"])] = {"i": int(record["i"]),
                                                "text": str(record["text"]),
                                                "tokens": int(record["tokens"]),
                                                "eos": bool(record["eos"])}
            except (ValueError, KeyError, TypeError):
                continue  # a torn last line, a stop while appending: that batch is redone

    def start(self, release: str | None) -> None:
        """Open for appending under ``release`` (the header is (re)written when it names
        another release or the file is new: through a temporary file and a rename)."""
        if self._file is not None:
            return
        if not self.path.exists() or release != self.release:
            self.release = release
            tmp = self.path.with_name(self.path.name + ".tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(json.dumps({"format": _FORMAT, "key": self.key, "release": release})
                        + "\n")
                for record in self._docs.values():
                    f.write(json.dumps(record, ensure_ascii=False) + "\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
        self._file = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 — held for the job

    def documents(self, positions: np.ndarray) -> dict[int, Mapping[str, Any]]:
        """The staged documents among ``positions``, by position."""
        return {i: self._docs[i] for i in positions.tolist() if i in self._docs}

    def add(self, records: Iterable[Mapping[str, Any]]) -> None:
        """Stage generated documents durably (written and fsync'ed before returning)."""
        if self._file is None:
            raise StageError("the stage was not started")
        records = list(records)
        self._file.write("".join(json.dumps(dict(r), ensure_ascii=False) + "\n"
                                 for r in records))
        self._file.flush()
        os.fsync(self._file.fileno())
        self._docs.update((int(r["i"]), dict(r)) for r in records)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def remove(self) -> None:
        """The job is committed: its side file goes."""
        self.close()
        self.path.unlink(missing_ok=True)
