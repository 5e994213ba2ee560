"""The ``.npz`` files of candidate sets and recoders: written atomically, read without pickle."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["save_npz"]


def save_npz(path: str | os.PathLike, meta: dict[str, Any], **arrays: np.ndarray) -> Path:
    """Write ``arrays`` and the JSON ``meta`` to ``path`` via a temporary file in the same
    directory, renamed at the end: a reader never sees half a file."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent if str(path.parent) else ".", suffix=".npz")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, meta=np.array(json.dumps(meta)), **arrays)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
