"""``textdp docembed``: ε-SentDP document embeddings with DeepCandidate, written to a .npy file."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from textdp.cli._common import CLIError, one_line
from textdp.cli._documents import EncoderOpt, load_candidates, load_recoder, sentence_encoder
from textdp.cli._help.docembed import (
    HELP,
    BatchOpt,
    CandidatesOpt,
    DocInputArg,
    NpyOutputOpt,
    ProjectionSeedOpt,
    ProjectionsOpt,
    RecoderOpt,
    SentEpsilonOpt,
)
from textdp.cli._ledger import BudgetOpt, CommandLedger, LedgerOpt, LedgerPolicyOpt, fingerprint_file
from textdp.cli._options import ReportOpt, SeedOpt, TextFieldOpt
from textdp.cli._ray import AddressOption, EngineOption, VerboseOption, WorkersOption
from textdp.cli._vector_files import docembed_done, docembed_on_ray, docembed_paths


def build_docembed_mechanism(epsilon: float, candidates: Path, recoder: Path | None,
                             n_projections: int, projection_seed: int) -> Any:
    """Load F (and H) and build DeepCandidate; every problem becomes a one-line user error."""
    from textdp.mechanisms.document import DeepCandidate

    cands = load_candidates(candidates)
    h = load_recoder(recoder)
    if h is None and cands.recoder_fingerprint is not None:
        raise CLIError(f"{candidates}: the candidates were built with a recoder; give it with "
                       "--recoder FILE")
    try:
        return DeepCandidate(cands, epsilon=epsilon, n_projections=n_projections, recoder=h,
                             projection_seed=projection_seed)
    except (TypeError, ValueError) as exc:
        raise CLIError(one_line(exc)) from None


def _encoder_for(mech: Any, name: Any) -> Any:
    """The sentence encoder, checked against the one the candidates were built with."""
    from textdp.encoders import encoder_name

    built_with = mech.candidates.encoder
    encoder = sentence_encoder(name, default=built_with)
    if built_with is not None and built_with != encoder_name(encoder):
        raise CLIError(f"the candidates were embedded with {built_with!r}, not with "
                       f"{encoder_name(encoder)!r}")
    if mech.recoder is not None and mech.recoder.output_dim != mech.candidates.dim:
        raise CLIError(f"the recoder gives {mech.recoder.output_dim}-d embeddings, the candidates "
                       f"are {mech.candidates.dim}-d")
    return encoder


def docembed(input: DocInputArg, output: NpyOutputOpt, epsilon: SentEpsilonOpt,
             candidates: CandidatesOpt, recoder: RecoderOpt = None,
             n_projections: ProjectionsOpt = 50, projection_seed: ProjectionSeedOpt = 0,
             seed: SeedOpt = None, text_field: TextFieldOpt = "text", report: ReportOpt = None,
             batch_size: BatchOpt = 256, encoder: EncoderOpt = None, ledger: LedgerOpt = None,
             ledger_policy: LedgerPolicyOpt = "warn", budget: BudgetOpt = None,
             engine: EngineOption = "local", workers: WorkersOption = None,
             ray_address: AddressOption = None, verbose: VerboseOption = False) -> None:
    from textdp._checks import check_seed
    from textdp.encoders import encoder_name, release_document_file
    from textdp.privacy.measurement import InputSpace
    from textdp.privacy.report import ReportContext, document_report
    from textdp.runner import Call, Outcome
    from textdp.sentences import splitter_name
    from textdp.spec import VectorSpec

    started = time.perf_counter()
    # 1. Paths and parameters, before anything is read or loaded; no two paths the same file.
    input, output, pairs = docembed_paths(input, output, report, (candidates, recoder, ledger),
                                          engine, workers, ray_address)
    book = CommandLedger(ledger, ledger_policy, budget, input, output, report)
    try:
        seed = check_seed(seed)
    except ValueError as exc:
        raise CLIError(one_line(exc)) from None
    mech = build_docembed_mechanism(epsilon, candidates, recoder, n_projections, projection_seed)
    # 2. The encoder, checked against the one the candidates were built with; 3. the release.
    sentences = _encoder_for(mech, encoder)
    if pairs is not None:
        return docembed_on_ray(pairs, input, output, report, book, mech, sentences, seed=seed,
                               text_field=text_field, batch_size=batch_size, workers=workers,
                               address=ray_address, verbose=verbose, started=started)

    def release(spec: Any, source: Any, measurement: Any) -> Any:
        out, counts = release_document_file(mech, input, sentences, text_field=text_field,
                                            batch_size=batch_size, seed=seed)
        io = {"input": str(input), "output": str(output), "records_in": len(counts),
              "records_out": int(out.shape[0]), "dim": int(out.shape[1])}
        return Outcome(out, document_report(
            mech, sentence_counts=counts, seed=seed, seconds=time.perf_counter() - started,
            encoder=encoder_name(sentences), sentence_splitter=splitter_name(),
            context=ReportContext(io=io)))

    def commit(outcome: Any, exposed: Any) -> None:
        # 4. Output and report together, or neither (then the --ledger completion).
        with book.files() as files:
            with files.writing(output) as tmp, open(tmp, "wb") as f:
                np.save(f, outcome.output)
            if report is not None:
                files.write_json(report, outcome.report)

    source = book.source(lambda: fingerprint_file(input, text_field=text_field),
                         space=InputSpace.splitter(splitter_name()))
    outcome = book.run(VectorSpec(mech, seed, kind="document"), source, Call(release), commit)
    out, result = outcome.output, outcome.report
    docembed_done(out.shape[0], out.shape[1], output, mech, report, result)


docembed.__doc__ = HELP
