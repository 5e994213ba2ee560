"""textdp: differentially private text.

Word-level metric-DP rewriting (MVC, ...), each release with an honest privacy report.

>>> import textdp
>>> result = textdp.privatize(["The food was great."], mechanism="mvc", epsilon=10)
>>> result.texts, result.report["guarantee"]["per_word"]
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("textdp")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+unknown"

from textdp import mechanisms
from textdp.mechanisms.document import DeepCandidate
from textdp.mechanisms.embedding import LaplaceVector, PrivEmb
from textdp.pipeline import Privatizer, PrivatizeResult, privatize

__all__ = ["__version__", "mechanisms", "privatize", "Privatizer", "PrivatizeResult",
           "PrivEmb", "LaplaceVector", "DeepCandidate"]
