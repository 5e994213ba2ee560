"""Real labelled text, obtained offline-first through the package manager into the user cache.

Nothing here downloads from a model or data hub: the VADER sentence sets ship inside the
``vadersentiment==3.3.2`` source distribution on PyPI. The first call runs
``pip download --no-binary :all: --no-deps vadersentiment==3.3.2`` into
``<cache>/datasets/`` (or uses ``TEXTDP_VADER_SDIST`` if it points at the .tar.gz already), and
extracts the sentence files once. No third-party text is committed to this repository.
"""

from textdp.datasets.vader import VADER_SETS, load_vader, vader_lexicon

__all__ = ["VADER_SETS", "load_vader", "vader_lexicon"]
