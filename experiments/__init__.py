"""The papers' experiments: not part of the installed library; each regenerates one results page.

From the repository's root (a source checkout with the ``experiments`` extra installed)::

    python -m experiments.privemb            # docs/results/privemb.md
    python -m experiments.deepcandidate      # docs/results/deepcandidate.md
    python -m experiments.word_mechanisms    # docs/results/word_mechanisms.md

or ``textdp experiment NAME``. Shared plumbing is in :mod:`experiments._harness`.
"""
