"""The experiments are a package of the checkout (``experiments/``), not of textdp: every test
here imports it from the repository root."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _checkout_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(REPO))
