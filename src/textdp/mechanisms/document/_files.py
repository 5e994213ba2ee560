"""The ``.npz`` files of candidate sets and recoders: written atomically, read without pickle."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["save_npz"]


def save_npz(path: str | os.PathLike, meta: dict[str, Any], **arrays: np.ndarray) -> Path:
    """Write ``arrays`` and the JSON ``meta`` to ``path`` as an atomic group
    (:class:`textdp.io.atomic.AtomicFiles`: a temporary file beside it, flushed to the disk and
    renamed at the end, one left by a killed run removed): a reader never sees half a file."""
    from textdp.io.atomic import AtomicFiles

    path = Path(path)
    with AtomicFiles() as files, files.writing(path) as tmp, open(tmp, "wb") as f:
        np.savez(f, meta=np.array(json.dumps(meta)), **arrays)
    return path
