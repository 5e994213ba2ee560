"""PrivEmb release throughput (384 → m), next to the raw numpy GEMM of the same shapes."""

from __future__ import annotations

import time

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks.common import best_of
from textdp import LaplaceVector, PrivEmb


def gemm_rate_f64(X: np.ndarray, phi_t: np.ndarray, repeat: int = 5) -> float:
    """Vectors/s of the bare float64 product X @ Φᵀ: the arithmetic PrivEmb cannot avoid."""
    out = np.empty((X.shape[0], phi_t.shape[1]))
    np.matmul(X, phi_t, out=out)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        np.matmul(X, phi_t, out=out)
        times.append(time.perf_counter() - t0)
    return X.shape[0] / min(times)


def run() -> str:
    n, d = 200_000, 384
    X = np.random.default_rng(0).standard_normal((n, d))
    rng = np.random.default_rng(1)
    rows = []
    for threads in (1, None):
        label = "1 thread" if threads == 1 else "all threads"
        with threadpool_limits(threads):
            for beta in (0.9, 0.5):
                mech = PrivEmb(epsilon=10.0, delta=1e-6, beta=beta, dim=d)
                gemm = gemm_rate_f64(X, np.ascontiguousarray(mech.projection.T))
                rate = n / best_of(lambda m=mech: m.release(X, rng), repeat=5)
                rows.append((f"PrivEmb release 384 → {mech.m} (β = {beta:g})", label, rate, gemm))
            strict = PrivEmb(epsilon=10.0, delta=1e-6, beta=0.9, dim=d, strict=True, snap="auto")
            gemm = gemm_rate_f64(X, np.ascontiguousarray(strict.projection.T))
            rate = n / best_of(lambda s=strict: s.release(X, rng), repeat=5)
            rows.append((f"PrivEmb strict + snap auto, 384 → {strict.m}", label, rate, gemm))
            m1 = LaplaceVector(epsilon=10.0)
            rows.append(("LaplaceVector (M1) release, 384 → 384", label,
                         n / best_of(lambda m=m1: m.release(X, rng), repeat=3), float("nan")))
    lines = [
        f"{n:,} float64 vectors of d = {d}; ε = 10, δ = 1e-6. Best of 5 runs. The reference is the "
        "bare float64 GEMM X @ Φᵀ of the same shapes (numpy/BLAS), timed the same way; the release "
        "adds the input check (NaN/inf), the noise (m normals and one Gamma draw per vector, float64) "
        "and the addition.",
        "",
        "| what | BLAS threads | vectors/s | GEMM vectors/s | % of GEMM |",
        "|---|---|---:|---:|---:|",
    ]
    for name, label, rate, gemm in rows:
        pct = "" if gemm != gemm else f"{100 * rate / gemm:.0f}%"
        g = "" if gemm != gemm else f"{gemm:,.0f}"
        lines.append(f"| {name} | {label} | {rate:,.0f} | {g} | {pct} |")
    single = [r for r in rows if r[1] == "1 thread"][0]
    lines += ["", f"Goal: ≥ 50% of the GEMM rate. Single-threaded, β = 0.9: "
                  f"{100 * single[2] / single[3]:.0f}%. The noise is drawn by one numpy Generator "
                  "(single-threaded), so with several BLAS threads the GEMM speeds up and the "
                  "release does not keep pace."]
    return "\n".join(lines)
