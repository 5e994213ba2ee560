"""What every embedding mechanism shares: vectors in, private vectors out, noise of density
∝ exp(−ε‖z‖/Δ), and optional snapping of the released coordinates.

Feyisetan & Kasiviswanathan, "Private Release of Text Embedding Vectors", TrustNLP 2021
(``papers/privemb_feyisetan_kasiviswanathan_2021.md``; SPEC §3), Claim 3: releasing f(x) + z with
z of density ∝ exp(−ε‖z‖/Δ) in R^k is ε metric DP per unit of ‖x − x′‖ when ‖f(x) − f(x′)‖ ≤
Δ‖x − x′‖. :class:`EmbeddingMechanism` holds the noise (a Gamma(k, Δ/ε) radius times a uniform
direction), the blocked release, the privacy map and the snap; the mechanisms
(:class:`~textdp.mechanisms.embedding.laplace_vector.LaplaceVector`, M1, and
:class:`~textdp.mechanisms.embedding.privemb.PrivEmb`, M2) give f and Δ.

* ``snap`` — released coordinates rounded to multiples of 2^k (Mironov, CCS 2012, against
  floating-point attacks on released reals). See :func:`snap_to_grid` for what this guarantees.

All guarantees are for the idealised real-valued mechanism (OpenDP's "idealized numerics"):
the float64 arithmetic of f(x) and of the sampler is not covered by a proof.
"""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Literal

import numpy as np

from textdp._checks import EPSILON, Parameter, check_parameters, check_rng
from textdp.noise import metric_laplace
from textdp.privacy import Budget, Guarantee, Notion, Numerics, check_distance, round_up_product
from textdp.privacy.measurement import Measurement, measurement_of

__all__ = ["METRIC", "NUMERICS", "SNAP", "EmbeddingMechanism", "check_vectors", "snap_to_grid"]

METRIC = "Euclidean distance ‖x − x′‖ between input vectors"
NUMERICS = ("idealised real arithmetic: the bound is proven for exact Φx and exact noise; "
            "float64 rounding in Φx and in the sampler is not covered by the proof")
_BLOCK_FLOATS = 1 << 17  # float64s per block in release() (1 MiB): keeps the noise buffer in cache


# --- parameter and data checks ------------------------------------------------------------------

def _check_snap(snap: object) -> int | Literal["auto"]:
    if snap == "auto":
        return snap  # type: ignore[return-value]
    if isinstance(snap, bool) or not isinstance(snap, numbers.Integral):
        raise TypeError(f"snap must be None, 'auto' or an integer exponent k (grid 2^k), got {snap!r}")
    if not -1000 <= int(snap) <= 1000:
        raise ValueError(f"snap exponent must lie in [-1000, 1000], got {snap!r}")
    return int(snap)


# The snap, declared once (validation, ``parameters``, CLI).
SNAP = Parameter("snap", object, "round released coordinates to multiples of 2^k: an integer k, "
                 "or 'auto' (k = ⌈log₂ noise scale⌉)", default=None, nullable=True,
                 check=_check_snap)


def check_vectors(X: object, dim: int | None = None, name: str = "X") -> np.ndarray:
    """``X`` as a C-contiguous float64 array of shape (N, d), or a clear error.

    Raises:
        TypeError: not an array of real numbers (complex, bool, strings, objects).
        ValueError: not 2-D, ``d`` differs from ``dim``, or a row holds NaN or infinity.
    """
    arr = np.asarray(X)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.floating)
                                 or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(f"{name} must be an array of real numbers, got dtype {arr.dtype}")
    if arr.ndim != 2:
        hint = f" (one vector: {name}[None, :])" if arr.ndim == 1 else ""
        raise ValueError(f"{name} must be a 2-D array (N vectors × d dimensions), got shape "
                         f"{arr.shape}{hint}")
    if dim is not None and arr.shape[1] != dim:
        raise ValueError(f"{name} has dimension d = {arr.shape[1]} but this mechanism was built for "
                         f"d = {dim}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    finite = np.isfinite(arr).all(axis=1)
    if not finite.all():
        bad = np.flatnonzero(~finite)
        shown = ", ".join(str(i) for i in bad[:5]) + (", …" if bad.size > 5 else "")
        raise ValueError(f"{name} has {bad.size} row(s) with NaN or infinity (rows {shown})")
    return arr


def _round_up(x: float) -> float:
    return float(np.nextafter(x, np.inf))


def snap_to_grid(W: np.ndarray, exponent: int) -> np.ndarray:
    """Round every coordinate to the nearest multiple of 2^exponent (ties to even), in place.

    Division and multiplication by a power of two are exact in binary floating point (barring
    overflow/underflow), so every output coordinate is exactly an integer multiple of 2^k.

    What this guarantees: for the idealised real-valued mechanism, rounding is a deterministic
    function of its output, i.e. post-processing — ε and δ are unchanged, and each vector moves by
    at most 2^(k−1)·√m (accounted for in the utility, :meth:`EmbeddingMechanism.describe`). What it
    does not: Mironov (CCS 2012) showed that the low-order bits of floating-point Laplace samples
    reveal the input, and proved that snapping (with clamping) repairs the one-dimensional Laplace
    mechanism at an explicit cost in ε. No such proof exists for this multivariate sampler
    (Gaussian direction × Gamma radius); snapping to a grid at least as coarse as the noise scale
    discards the bits such attacks read, as a mitigation.
    """
    scale = math.ldexp(1.0, exponent)
    np.divide(W, scale, out=W)
    np.rint(W, out=W)
    np.multiply(W, scale, out=W)
    return W


# --- the mechanisms' common part --------------------------------------------------------------

class EmbeddingMechanism(ABC):
    """A mechanism that releases vectors: (N, d) array in, (N, output_dim) array out.

    Built once, validated once, immutable afterwards; randomness only through :meth:`release`'s
    ``rng``. Each input vector is released independently (local model).
    """

    name: str
    #: Every constructor parameter, declared once (see :mod:`textdp._checks`).
    PARAMETERS: ClassVar[tuple[Parameter, ...]] = (EPSILON, SNAP)

    def __init__(self, **params: Any) -> None:
        self._params = check_parameters(self.PARAMETERS, params, owner=self.name)
        self._epsilon: float = self._params["epsilon"]
        self._snap_request: int | Literal["auto"] | None = self._params["snap"]

    @property
    def epsilon(self) -> float:
        return self._epsilon

    # -- the guarantee as code
    @property
    @abstractmethod
    def notion(self) -> Notion: ...

    @property
    def numerics(self) -> Numerics:
        """Snapped outputs when a grid is set, else idealised float."""
        return Numerics.IDEALIZED if self.snap_exponent is None else Numerics.SNAPPED

    def _map_delta(self) -> float:
        return 0.0

    def privacy_map(self, d_in: Any) -> Budget:
        """(ε·d_in rounded up, δ) for two input vectors at Euclidean distance ``d_in`` (vectorised).

        The noise is calibrated to ε per unit of ‖x − x′‖ (Claim 3); δ is the mechanism's (0 for
        LaplaceVector and strict PrivEmb; for PrivEmb, it covers the input domain it assumes).
        """
        return Budget(round_up_product(self._epsilon, check_distance(d_in)), self._map_delta())

    #: The stable id of the metric ``d_in`` is measured in: ‖x − x′‖ between input vectors (a
    #: release's input space adds the encoder when the vectors are embeddings of texts).
    input_metric: ClassVar[str] = "vector-l2"

    @property
    def measurement(self) -> Measurement:
        """Input metric, notion and :meth:`privacy_map` as one measurement."""
        return measurement_of(self)

    def _guarantee(self, **prose: Any) -> Guarantee:
        """The guarantee with its notion, ε, δ and numerics from the code, the rest in words."""
        return Guarantee(notion=self.notion, epsilon=self._epsilon, metric=METRIC,
                         delta=self.privacy_map(1.0).delta, numerics=self.numerics, **prose)

    @property
    @abstractmethod
    def input_dim(self) -> int | None:
        """d, or None when any d is accepted."""

    @abstractmethod
    def output_dim(self, dim: int) -> int:
        """The dimension of released vectors for inputs of dimension ``dim``."""

    @property
    @abstractmethod
    def sensitivity(self) -> float:
        """Δ: the noise density is ∝ exp(−ε‖z‖/Δ) (Claim 3)."""

    @property
    def noise_scale(self) -> float:
        """λ = Δ/ε rounded up: the radius of the noise is Gamma(output_dim, λ)."""
        return _round_up(self.sensitivity / self._epsilon)

    @property
    def snap_exponent(self) -> int | None:
        """k of the grid 2^k, or None. ``"auto"`` gives k = ⌈log₂ λ⌉, Mironov's choice of the
        smallest power of two at least the noise scale."""
        if self._snap_request == "auto":
            return math.ceil(math.log2(self.noise_scale))
        return self._snap_request

    @property
    @abstractmethod
    def guarantee(self) -> Guarantee: ...

    @property
    @abstractmethod
    def parameters(self) -> dict[str, Any]: ...

    @abstractmethod
    def _transform_into(self, X: np.ndarray, out: np.ndarray) -> None:
        """The deterministic part f(X) of a block of rows, written into ``out`` (float64)."""

    def release(self, X: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
        """Private vectors f(x_i) + z_i, z_i i.i.d. with density ∝ exp(−ε‖z‖/Δ), optionally snapped.

        The noise is a uniform direction (normalised standard normals) times a Gamma(k, λ) radius,
        λ = Δ/ε (Wu et al. 2017, the paper's footnote 1; TESTING.md §1). Rows are processed in
        blocks of a fixed size so the noise buffer stays in cache; for a given ``rng`` state the
        output does not depend on anything but X.

        Args:
            X: (N, d) array of real numbers, no NaN or infinity.
            rng: the source of the noise; None draws a fresh OS-entropy generator.

        Returns:
            float64 array (N, output_dim).
        """
        rng = check_rng(rng)
        X = check_vectors(X, self.input_dim)
        n = X.shape[0]
        k = self.output_dim(X.shape[1])
        out = np.empty((n, k), dtype=np.float64)
        rows = max(64, _BLOCK_FLOATS // max(k, 1))
        buffer = np.empty((min(n, rows), k), dtype=np.float64)
        scale = self.noise_scale
        for start in range(0, n, rows):
            stop = min(n, start + rows)
            block = out[start:stop]
            self._transform_into(X[start:stop], block)
            block += metric_laplace(stop - start, k, rng=rng, scale=scale,
                                    out=buffer[: stop - start])
        if self.snap_exponent is not None:
            snap_to_grid(out, self.snap_exponent)
        return out

    def expected_noise_norm(self, dim: int | None = None) -> float:
        """E‖z‖ = output_dim · λ."""
        return self.output_dim(dim if dim is not None else self.input_dim or 0) * self.noise_scale

    def _snap_description(self, k_out: int) -> dict[str, Any] | None:
        k = self.snap_exponent
        if k is None:
            return None
        grid = math.ldexp(1.0, k)
        return {"exponent": k, "grid": grid, "requested": self._snap_request,
                "max_shift_per_coordinate": grid / 2,
                "max_shift_per_vector": grid / 2 * math.sqrt(k_out),
                "privacy": "post-processing of the ideal mechanism: ε and δ unchanged",
                "floating_point": "mitigation against Mironov (2012)-style attacks on the low-order "
                                  "bits; no floating-point proof exists for this sampler"}

    def _snap_assumption(self) -> tuple[str, ...]:
        k = self.snap_exponent
        if k is None:
            return ()
        return (f"released coordinates are rounded to multiples of 2^{k}: post-processing of the "
                "ideal mechanism, so ε and δ are unchanged; each coordinate moves by at most "
                f"2^{k - 1}. It mitigates, but no proof covers, floating-point attacks (Mironov 2012) "
                "on this multivariate sampler",)

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.parameters.items())
        return f"{type(self).__name__}({params})"
