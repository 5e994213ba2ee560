"""DP-Prompt over texts on the shared engine: :class:`Paraphraser`, :func:`paraphrase`,
:func:`privatize_spec`.

The law of every token — softmax(clip(ℓ, b_lo, b_hi)/T), Utpala et al., Findings of EMNLP 2023,
Thm. 1 — is applied by :meth:`textdp.mechanisms.prompt.DPPrompt.sample` to the float64 logits the
engine returns, with one uniform per (document, step) drawn through :mod:`textdp._random` before
generation (never torch's RNG): seeded, document i's uniforms come from
``SeedSequence(seed, spawn_key=(i,))`` (i its position over the whole run); unseeded, from the
secure generator. So a seeded run gives the same text whatever the batch size or the order in
which the engine schedules the documents.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from textdp import _random
from textdp._checks import check_seed
from textdp.lm.engine import Engine, UniformSampler
from textdp.lm.model import LanguageModel, shared_model
from textdp.mechanisms.prompt import DPPrompt

__all__ = ["DEFAULT_BATCH_SIZE", "DPPromptSampler", "Paraphraser", "PromptEngine", "generate_ids",
           "paraphrase", "privatize_spec", "torch_sample_tokens"]

#: Default documents generated together on the CPU.
DEFAULT_BATCH_SIZE = 16


def torch_sample_tokens(logits: Any, uniforms: Any, low: float, high: float,
                        temperature: float) -> Any:
    """:func:`textdp.mechanisms.prompt.sample_tokens` on a float64 torch tensor [k, vocab], on its
    device: inverse-CDF sampling of softmax(clip(ℓ, low, high)/T) with one uniform per row
    (Utpala et al. 2023, Thm. 1). The same steps in the same order as the numpy reference —
    clip, subtract the row max, divide by T, exp, cumulative sum, the first index whose
    cumulative weight exceeds u·total — so the law is the same up to the last-ulp differences
    of two float64 ``exp`` implementations (a token can differ only when u falls within about
    1e-15 of a boundary of the cumulative law). NaN logits are an error."""
    import torch

    if logits.dtype != torch.float64 or logits.ndim != 2:
        raise ValueError("torch_sample_tokens needs float64 logits [k, vocab]")
    w = logits.clamp(low, high)  # a new tensor; ±inf clip to the bounds
    top = w.amax(-1, keepdim=True)
    if torch.isnan(top).any():
        raise ValueError("logits contain NaN")
    w.sub_(top).div_(temperature).exp_()
    cum = w.cumsum(-1)
    target = torch.as_tensor(uniforms, dtype=torch.float64, device=w.device) * cum[:, -1]
    index = torch.searchsorted(cum, target[:, None].contiguous(), right=True)[:, 0]
    over = index >= w.shape[-1]  # u·total rounded up to the total: the last positive weight
    if bool(over.any()):
        last = w.shape[-1] - 1 - (w.flip(-1) > 0).int().argmax(-1)
        index = torch.where(over, last, index)
    return index


class DPPromptSampler(UniformSampler):
    """DP-Prompt's law for the engine: ``mechanism.sample`` on numpy logits, and
    :func:`torch_sample_tokens` on the engine's fast path; ``uniforms[row, step]`` either way."""

    def __init__(self, mechanism: DPPrompt, uniforms: np.ndarray) -> None:
        super().__init__(mechanism.sample, uniforms)
        self.mechanism = mechanism

    def sample_torch(self, logits: Any, rows: np.ndarray, steps: np.ndarray) -> Any:
        return torch_sample_tokens(logits, self.uniforms[rows, steps], *self.mechanism.clip,
                                   self.mechanism.temperature)


def generate_ids(model: Any, prompts: Sequence[Sequence[int]], mechanism: DPPrompt,
                 uniforms: np.ndarray, eos_ids: set[int], pad_id: int, *,
                 batch_size: int | None = None) -> list[list[int]]:
    """Generate for ``prompts`` with a bare transformers model: token t of prompt b is
    ``mechanism.sample(logits, uniforms[b, t])``; at most ``uniforms.shape[1]`` tokens, up to and
    including the first EOS. All prompts in one batch unless ``batch_size`` is given."""
    lm = LanguageModel(model=model)
    engine = Engine(lm, device="cpu", batch_size=batch_size or max(1, len(prompts)),
                    eos_ids=eos_ids, pad_id=pad_id)
    return engine.generate(prompts, max_new_tokens=int(uniforms.shape[1]),
                           sampler=UniformSampler(mechanism.sample, uniforms))


class Paraphraser:
    """DP-Prompt over texts: ``run(texts, start)`` returns their private paraphrases.

    Every document goes through the same pipeline as the word mechanisms: its identifiers and
    entities are masked first (:class:`textdp.lm.masking.DocumentMasker`, on by default), then
    the model paraphrases the masked text.

    Args:
        mechanism: a built :class:`DPPrompt`, or None to build one from ``params``.
        model: a :class:`LanguageModel`, a path (directory or .gguf), or None (the default); a
            path or None uses the process's shared model (loaded once per process).
        seed: None (secure, the default) or an integer: document i (its position over the whole
            run, ``start`` + index) draws from ``SeedSequence(seed, spawn_key=(i,))``.
        batch_size: documents generated together (rows of the engine's batch; default 16 on
            the CPU, 256 on CUDA).
        device: ``"auto"`` (CUDA when present, else CPU), ``"cpu"`` or ``"cuda"``.
        single_line: replace line breaks in a paraphrase by spaces (post-processing, so the
            guarantee is unchanged; the command line does it, so a .txt line stays one line).
        policy: the identifier and entity options (a :class:`textdp.spec.TokenPolicy`; None:
            the defaults, identifiers and every entity kind masked). ``TokenPolicy(
            identifiers=False, entities="none")`` turns masking off.
    """

    def __init__(self, mechanism: DPPrompt | None = None, *, model: Any = None,
                 seed: int | None = None, batch_size: int | None = None,
                 device: str = "auto", single_line: bool = False, policy: Any = None,
                 **params: Any) -> None:
        from textdp.lm.masking import DocumentMasker

        self.single_line = bool(single_line)
        self.mechanism = mechanism if mechanism is not None else DPPrompt(**params)
        self.seed = check_seed(seed)
        self.masker = DocumentMasker(policy)
        self.lm = model if isinstance(model, LanguageModel) else shared_model(model)
        self.engine = Engine(self.lm, device=device, batch_size=batch_size)
        self.batch_size = self.engine.batch_size
        self._documents = self._generated = self._eos = 0
        self._seconds = 0.0

    @classmethod
    def from_spec(cls, spec: Any, *, batch_size: int | None = None,
                  single_line: bool = False) -> Paraphraser:
        """The paraphraser of a prompt release ``spec`` (:func:`textdp.spec.release_spec`):
        its mechanism, model, device, seed and masking policy."""
        if spec.kind != "prompt":
            raise ValueError(f"mechanism {spec.name!r} is a word mechanism: run it with "
                             "spec.privatizer()")
        params = dict(spec.params)
        return cls(spec.mechanism_object(), model=params.get("model"), seed=spec.seed,
                   batch_size=batch_size, device=params.get("device", "auto"),
                   single_line=single_line, policy=spec.policy)

    def _uniforms(self, positions: np.ndarray) -> np.ndarray:
        n, count = self.mechanism.max_new_tokens, len(positions)
        if self.seed is None:
            return self.mechanism.draw(count * n, _random.secure_generator()).reshape(count, n)
        gens = _random.DocumentGenerators(self.seed).many(positions)
        return np.stack([self.mechanism.draw(n, g) for g in gens]) if count else np.empty((0, n))

    def run(self, texts: Sequence[str], start: int = 0, *, progress: Any = None,
            stage: Any = None) -> list[str]:
        """Private paraphrases of ``texts`` (every one, empty ones included), in order;
        ``progress`` is called with the number of documents each time some finish.

        ``stage`` (a :class:`textdp.lm.staging.Stage`, for a resumable job): documents it holds
        (by position, ``start`` + index) are taken from it and not generated again — their
        noise was drawn once, in the run that staged them — and the documents generated here
        are added to it, durably, before returning."""
        t0 = time.perf_counter()
        texts = list(texts)
        masked = self.masker.mask(texts)
        positions = np.arange(start, start + len(texts), dtype=np.int64)
        staged = stage.documents(positions) if stage is not None else {}
        todo = [j for j, i in enumerate(positions.tolist()) if i not in staged]
        rows = self._generate([masked[j] for j in todo], positions[todo], progress)
        eos = self.lm.eos_ids()
        new = [s.strip() for s in self.lm.decode(rows)]
        if self.single_line:
            new = [" ".join(s.split()) for s in new]
        records = [{"i": int(positions[j]), "text": t, "tokens": len(r),
                    "eos": bool(r) and r[-1] in eos}
                   for j, t, r in zip(todo, new, rows, strict=True)]
        if stage is not None and records:
            stage.add(records)
        by_position = {**staged, **{r["i"]: r for r in records}}
        out = [by_position[i]["text"] for i in positions.tolist()]
        self.masker.count_output(out)
        self._generated += sum(by_position[i]["tokens"] for i in positions.tolist())
        self._eos += sum(bool(by_position[i]["eos"]) for i in positions.tolist())
        self._documents += len(texts)
        self._seconds += time.perf_counter() - t0
        return out

    def _generate(self, texts: list[str], positions: np.ndarray, progress: Any
                  ) -> list[list[int]]:
        if not texts:
            return []
        sampler = DPPromptSampler(self.mechanism, self._uniforms(positions))
        return self.engine.generate(self.lm.prompt_ids(texts, self.mechanism.template),
                                    max_new_tokens=self.mechanism.max_new_tokens,
                                    sampler=sampler, progress=progress)

    def report(self, **context: Any) -> Any:
        """The privacy report of everything :meth:`run` has released so far; ``context``: where
        it ran (``ledger``, ``io``, …: :class:`textdp.privacy.report.ReportContext`)."""
        from textdp.privacy.report import ReportContext, generation_report

        return generation_report(self.mechanism, model=self.lm.describe(),
                                 documents=self._documents, generated_tokens=self._generated,
                                 stopped_at_eos=self._eos, seed=self.seed, seconds=self._seconds,
                                 context=ReportContext(**context),
                                 sections=self.masker.sections())


def paraphrase(texts: Sequence[str], *, model: Any = None, seed: int | None = None,
               batch_size: int | None = None, ledger: Any = None,
               ledger_policy: str = "warn", budget: float | None = None,
               **params: Any) -> list[str]:
    """DP-Prompt paraphrases of ``texts`` (see :class:`Paraphraser`; ``params`` as
    :class:`DPPrompt`: one of epsilon, epsilon_per_token, temperature, and the rest, and
    ``device``).

    ``ledger`` (a path or a :class:`textdp.ledger.Ledger`), ``ledger_policy`` and ``budget`` as in
    :func:`textdp.privatize`: pure ε-DP per document composes by adding ε's, whatever the model.
    The texts only: ``textdp.privatize(texts, mechanism="dp_prompt", ...)`` returns the report
    too.
    """
    from textdp.ledger import as_ledger
    from textdp.spec import release_spec

    book = as_ledger(ledger, ledger_policy, budget)
    spec = release_spec("dp_prompt", params.pop("epsilon", None), seed=seed, model=model,
                        **params)
    return privatize_spec(spec, texts, batch_size=batch_size, book=book)[0]


def privatize_spec(spec: Any, texts: Sequence[str], *, batch_size: int | None = None,
                   book: Any = None, input_name: str | None = None
                   ) -> tuple[list[str], dict[str, Any]]:
    """Run the prompt release ``spec`` (:func:`textdp.spec.release_spec` with ``dp_prompt``)
    over ``texts``: (the paraphrases, the report). ``book``, a :class:`textdp.ledger.Ledger` or
    None, guards the release (checked before the model runs, recorded after) and its section
    is attached to the report. Pure ε-DP per document composes by adding ε's, whatever the model.
    The release runs through :func:`textdp.runner.run_release`.
    """
    from textdp.runner import Texts, run_release

    engine = PromptEngine(spec, batch_size)
    outcome = run_release(spec, Texts(list(texts), input_name), engine, ledger=book)
    return outcome.output, outcome.report


class PromptEngine:
    """The runner's engine for a prompt release (:func:`textdp.runner.run_release`): the spec's
    :class:`Paraphraser`, built (model loaded) before the ledger is touched."""

    def __init__(self, spec: Any, batch_size: int | None = None) -> None:
        self.paraphraser = Paraphraser.from_spec(spec, batch_size=batch_size)

    def run(self, spec: Any, source: Any, measurement: Any) -> Any:
        from textdp.runner import Outcome

        out = self.paraphraser.run(source.texts)
        return Outcome(out, self.paraphraser.report())
