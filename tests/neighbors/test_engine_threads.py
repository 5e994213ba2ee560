"""The engine's default thread count respects OMP_NUM_THREADS (a Ray actor of one CPU must not
start one search thread per core of the machine: issue 13's scaling benchmark found that)."""

from __future__ import annotations

import os

import numpy as np

from textdp.neighbors.engine import NearestNeighbors


def _jobs() -> int:
    return NearestNeighbors(np.zeros((10, 3), dtype=np.float32)).n_jobs


def test_omp_num_threads_caps_the_default_threads(monkeypatch):
    cores = min(8, len(os.sched_getaffinity(0)))
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert _jobs() == cores
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert _jobs() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "not a number")
    assert _jobs() == cores
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert NearestNeighbors(np.zeros((10, 3), dtype=np.float32), n_jobs=2).n_jobs == 2
