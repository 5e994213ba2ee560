"""DP-Prompt: paraphrase by a language model whose every token is an exponential-mechanism draw.

Utpala, Hooker & Chen, "Locally Differentially Private Document Generation Using Zero Shot
Prompting", Findings of EMNLP 2023, §3 (Theorem 1). A public prompt template asks a causal LM to
paraphrase the document; at every generation step the next token is drawn from

    Pr[token = v] = exp(clip(ℓ_v, b_lo, b_hi) / T) / Σ_u exp(clip(ℓ_u, b_lo, b_hi) / T)

over the whole vocabulary, ℓ the model's logits given the prompt and the tokens so far. That is
the exponential mechanism (McSherry & Talwar 2007) with utility clip(ℓ) of sensitivity
Δ = b_hi − b_lo whatever the document (every clipped logit lies in [b_lo, b_hi]), so one step is
ε_token-DP with ε_token = 2Δ/T. With a fixed cap of n = ``max_new_tokens`` steps, sequential
composition gives ε_doc = n·ε_token: pure ε-DP, local, between ANY two documents.

Why stopping at the end-of-sequence token costs nothing extra: EOS is itself a sampled token, and
after it the process may be regarded as continuing deterministically (padding) up to n steps;
the released text is a function (post-processing) of that fixed-length process. Conditioned on
the same prefix of outputs, every step's law is ε_token-close for any two documents, so any
output sequence — stopped early or not — has probability ratio at most exp(n·ε_token).
The output length, the prompt template, the model and (b_lo, b_hi, T, n) are public.

This module is the pure part: parameters, ε arithmetic, the privacy map and the sampler over an
array of logits (vectorised over a batch). Loading a model and the generation loop live above
the core in :mod:`textdp.lm`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from textdp._checks import Parameter, check_epsilon, check_parameters, check_rng
from textdp.privacy import Budget, Guarantee, Notion, Numerics, check_distance, round_up, round_up_product
from textdp.privacy.measurement import Measurement, measurement_of

__all__ = ["DEFAULT_CLIP", "DEFAULT_MAX_NEW_TOKENS", "DEFAULT_TEMPLATE", "DPPrompt",
           "clipped_log_probabilities", "sample_tokens"]

#: The public prompt (the document replaces ``{document}``); :mod:`textdp.lm` wraps it in the
#: model's chat template when the tokenizer has one. Utpala et al. use "Document: … Paraphrase
#: of the document:"; an instruction-tuned chat model follows an instruction better.
DEFAULT_TEMPLATE = "Paraphrase the following text. Reply with the paraphrase only.\n\n{document}"
#: Clipping bounds for SmolLM2-135M-Instruct (the default model): its next-token logits on a
#: public paraphrase prompt have median ≈ 12, 99.9th percentile ≈ 27 and maximum ≈ 33 — so
#: [10, 30] keeps the ranking of the plausible tokens and floors the long tail. They are public
#: parameters, chosen without any private document; another model may want others.
DEFAULT_CLIP = (10.0, 30.0)
DEFAULT_MAX_NEW_TOKENS = 64
#: As for word mechanisms (textdp.mechanisms.base.MIN_EPSILON): a smaller ε is refused as a mistake.
MIN_EPSILON_PER_TOKEN = 1e-12

PER_DOCUMENT = (
    "Pure local ε-DP per document: for ANY two documents x, x′ (any content, any length) and any "
    "output text y, Pr[M(x)=y] ≤ exp(ε_doc)·Pr[M(x′)=y], with ε_doc = max_new_tokens·ε_token "
    "(sequential composition over a fixed number of sampled tokens; stopping at the "
    "end-of-sequence token is post-processing, since EOS is itself a sampled token and the "
    "remaining steps are deterministic padding). Several documents of one person compose: "
    "k documents cost k·ε_doc. Public: the prompt template, the model, the clipping bounds, T "
    "and max_new_tokens; the output length is at most max_new_tokens tokens.")
PER_TOKEN = ("each generated token: exponential mechanism over the whole vocabulary with utility "
             "clip(logit, b_lo, b_hi) of sensitivity b_hi − b_lo, ε_token = 2(b_hi − b_lo)/T")


def _positive_or_none(name: str, help: str) -> Parameter:
    return Parameter(name, float, help, default=None, low=0.0, low_open=True, nullable=True)


def _epsilon_or_none(name: str, help: str) -> Parameter:
    """An ε of DP-Prompt (per document or per token), checked by :func:`check_epsilon`."""
    return Parameter(name, float, help, default=None, low=0.0, low_open=True, nullable=True,
                     check=lambda value: check_epsilon(value, name))


class DPPrompt:
    """A language model paraphrases each document (DP-Prompt, Utpala et al. 2023); pure ε-DP per document.

    Every token is drawn from clipped, temperature-scaled logits (Findings of EMNLP 2023, Thm. 1),
    so the guarantee holds between any two documents.

    Give exactly one of ``epsilon`` (ε_doc, per document), ``epsilon_per_token`` or
    ``temperature``; the other two follow from ε_token = 2(b_hi − b_lo)/T and
    ε_doc = max_new_tokens·ε_token. A built mechanism is immutable.
    """

    name: ClassVar[str] = "dp_prompt"
    PARAMETERS: ClassVar[tuple[Parameter, ...]] = (
        _epsilon_or_none("epsilon", "ε per document (ε_doc = max_new_tokens·ε_token)"),
        _epsilon_or_none("epsilon_per_token", "ε per generated token, 2(b_hi − b_lo)/T"),
        _positive_or_none("temperature", "sampling temperature T (ε then follows)"),
        Parameter("max_new_tokens", int, "fixed cap n on generated tokens (public)",
                  default=DEFAULT_MAX_NEW_TOKENS, low=1),
        Parameter("clip_low", float, "lower logit clipping bound b_lo", default=DEFAULT_CLIP[0]),
        Parameter("clip_high", float, "upper logit clipping bound b_hi", default=DEFAULT_CLIP[1]),
        Parameter("template", str, "public prompt template with a {document} field",
                  default=DEFAULT_TEMPLATE),
    )
    reference: ClassVar[str] = ("Utpala, Hooker & Chen, Locally Differentially Private Document "
                                "Generation Using Zero Shot Prompting, Findings of EMNLP 2023, "
                                "Theorem 1 (exponential mechanism, McSherry & Talwar 2007)")
    notion: ClassVar[Notion] = Notion.LOCAL_DP
    numerics: ClassVar[Numerics] = Numerics.IDEALIZED

    def __init__(self, **params: Any) -> None:
        p = check_parameters(self.PARAMETERS, params, owner=f"mechanism {self.name!r}")
        given = [k for k in ("epsilon", "epsilon_per_token", "temperature") if p[k] is not None]
        if len(given) != 1:
            raise ValueError("dp_prompt: give exactly one of epsilon (per document), "
                             f"epsilon_per_token or temperature, got {given or 'none'}")
        if not p["clip_high"] > p["clip_low"]:
            raise ValueError(f"dp_prompt: clip_high must exceed clip_low, got "
                             f"[{p['clip_low']:g}, {p['clip_high']:g}]")
        if "{document}" not in p["template"]:
            raise ValueError("dp_prompt: the template must contain the field {document}")
        self._n = p["max_new_tokens"]
        # Δ = b_hi − b_lo exactly (a float difference can round below it), and the float Δ
        # rounded up: the temperature an ε implies then never undershoots.
        self._exact_sensitivity = Fraction(p["clip_high"]) - Fraction(p["clip_low"])
        self._sensitivity = round_up(self._exact_sensitivity)
        if not np.isfinite(self._sensitivity):
            raise ValueError("dp_prompt: clip_high − clip_low must be finite")
        if p["temperature"] is not None:
            self._temperature = p["temperature"]
        else:
            per_token = p["epsilon_per_token"] or p["epsilon"] / self._n
            self._temperature = 2.0 * self._sensitivity / per_token
        if not np.isfinite(self._temperature) or self._temperature <= 0:
            raise ValueError("dp_prompt: the temperature this ε implies is not a positive finite "
                             "number; use a larger ε")
        if 2.0 * self._sensitivity / self._temperature < MIN_EPSILON_PER_TOKEN:
            raise ValueError(f"dp_prompt: ε per token {2 * self._sensitivity / self._temperature:g} "
                             f"is below {MIN_EPSILON_PER_TOKEN:g}: every token would be uniform "
                             "over the vocabulary, whatever the document (likely a mistake)")
        self._given = given[0]
        self._params = p

    # --- ε arithmetic: the temperature is the mechanism; ε is read from it, rounded up -------
    @property
    def temperature(self) -> float:
        return self._temperature

    @property
    def sensitivity(self) -> float:
        """Δ = b_hi − b_lo (rounded up): the range of every clipped logit."""
        return self._sensitivity

    @property
    def max_new_tokens(self) -> int:
        return self._n

    @property
    def clip(self) -> tuple[float, float]:
        return self._params["clip_low"], self._params["clip_high"]

    @property
    def template(self) -> str:
        return self._params["template"]

    def _exact_epsilon_per_token(self) -> Fraction:
        """2(b_hi − b_lo)/T in exact arithmetic, from the float parameters."""
        return 2 * self._exact_sensitivity / Fraction(self._temperature)

    @property
    def epsilon_per_token(self) -> float:
        """ε_token = 2(b_hi − b_lo)/T computed exactly from the float parameters, rounded up:
        the smallest float ≥ the exact value."""
        return round_up(self._exact_epsilon_per_token())

    @property
    def epsilon(self) -> float:
        """ε_doc = max_new_tokens · ε_token computed exactly, rounded up (≥ the exact value, and
        ≤ max_new_tokens times :attr:`epsilon_per_token`)."""
        return round_up(self._n * self._exact_epsilon_per_token())

    @property
    def parameters(self) -> dict[str, Any]:
        """Every parameter that changes the output law, with the derived ones."""
        return {"epsilon": self.epsilon, "epsilon_per_token": self.epsilon_per_token,
                "temperature": self._temperature, "max_new_tokens": self._n,
                "clip_low": self.clip[0], "clip_high": self.clip[1], "template": self.template,
                "given": self._given}

    #: The stable id of the metric ``d_in`` counts in: documents substituted, any content.
    input_metric: ClassVar[str] = "document-substitution"

    @property
    def measurement(self) -> Measurement:
        """Input metric, notion and :meth:`privacy_map` as one measurement."""
        return measurement_of(self)

    def privacy_map(self, d_in: Any) -> Budget:
        """``d_in`` = number of the person's documents that differ (any content): d_in·ε_doc."""
        return Budget(round_up_product(self.epsilon, check_distance(d_in)))

    @property
    def guarantee(self) -> Guarantee:
        return Guarantee(notion=self.notion, epsilon=self.privacy_map(1).epsilon, metric="",
                         per_word=PER_TOKEN, per_document=PER_DOCUMENT,
                         assumptions=("holds for the clipped logits whatever the model: the "
                                      "model, template and parameters are fixed before seeing "
                                      "the documents",),
                         reference=self.reference, numerics=self.numerics)

    # --- the sampler -------------------------------------------------------------------------
    def log_probabilities(self, logits: Any) -> np.ndarray:
        """The exact law of one step: log softmax(clip(logits)/T) over the last axis (float64)."""
        return clipped_log_probabilities(logits, *self.clip, self._temperature)

    def draw(self, steps: int, rng: np.random.Generator | None = None) -> np.ndarray:
        """All randomness one document needs: ``steps`` uniforms on [0, 1) (one per token)."""
        return check_rng(rng).random(int(steps))

    def sample(self, logits: Any, uniforms: Any) -> np.ndarray:
        """Deterministic, vectorised over rows: the token of each row of ``logits`` (B, V) for
        its uniform in ``uniforms`` (B,) (see :func:`sample_tokens`)."""
        return sample_tokens(logits, uniforms, *self.clip, self._temperature)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "parameters": self.parameters,
                "sensitivity": self._sensitivity, "guarantee": self.guarantee.to_dict()}

    def __repr__(self) -> str:
        return (f"DPPrompt(epsilon={self.epsilon:g}, temperature={self._temperature:g}, "
                f"max_new_tokens={self._n}, clip={self.clip})")


def _weights(logits: Any, low: float, high: float, temperature: float) -> np.ndarray:
    """exp((clip(ℓ) − max)/T) in float64, rows on the last axis; NaN logits are an error.

    In place on one new array (the sampler's hot path: a [k, vocab] slice per generated token).
    A NaN anywhere in a row makes that row's max NaN, so checking the maxima finds every NaN."""
    x = np.asarray(logits, dtype=np.float64)
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError("logits need at least one token on the last axis")
    c = np.clip(x, low, high)  # ±inf logits clip to the bounds too; a new array
    top = c.max(axis=-1, keepdims=True)
    if np.isnan(top).any():
        raise ValueError("logits contain NaN")
    np.subtract(c, top, out=c)
    np.divide(c, temperature, out=c)
    return np.exp(c, out=c)


def clipped_log_probabilities(logits: Any, low: float, high: float,
                              temperature: float) -> np.ndarray:
    """log softmax(clip(logits, low, high) / temperature) over the last axis (float64)."""
    x = np.clip(np.asarray(logits, dtype=np.float64), low, high) / temperature
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


def sample_tokens(logits: Any, uniforms: Any, low: float, high: float,
                  temperature: float) -> np.ndarray:
    """Inverse-CDF sampling of softmax(clip(logits)/T), one uniform per row (vectorised).

    Row b returns the first index whose cumulative weight exceeds u_b · (total weight), so
    Pr[index = v] = w_v / Σ w exactly up to float64 rounding of the cumulative sum (idealised
    numerics, as every floating-point sampler here). A token of weight 0 (possible only when
    (b_hi − b_lo)/T > 745) is never returned.
    """
    w = _weights(logits, low, high, temperature)
    u = np.asarray(uniforms, dtype=np.float64)
    if u.shape != w.shape[:-1]:
        raise ValueError(f"need one uniform per row: logits {w.shape}, uniforms {u.shape}")
    cum = np.cumsum(w, axis=-1)
    target = u * cum[..., -1]
    # The number of cumulative weights ≤ target (cum is non-decreasing): a binary search per row.
    flat_cum, flat_target = cum.reshape(-1, cum.shape[-1]), target.reshape(-1)
    index = np.fromiter((np.searchsorted(flat_cum[i], flat_target[i], side="right")
                         for i in range(flat_target.size)), dtype=np.int64,
                        count=flat_target.size).reshape(target.shape)
    # Below the total, the index found has positive weight (cum rises there). u·total can round
    # up to the total itself: those rows fall back to the last token of positive weight.
    over = index >= w.shape[-1]
    if over.any():
        last = w.shape[-1] - 1 - np.argmax(w[over][..., ::-1] > 0, axis=-1)
        index[over] = last
    return index
