"""The VADER (Hutto & Gilbert, ICWSM 2014) human-rated sentence sets.

Four sets, each line ``id<TAB>mean sentiment in [−4, 4]<TAB>sentence``: 4,200 tweets, 10,605
movie-review snippets (Pang & Lee's sentences), 3,708 Amazon review snippets and 5,190 NYT
editorial snippets. Amazon and NYT ids are ``document_sentence``.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from textdp.vocab import cache_dir

VADER_SETS = {
    "tweets": "tweets_GroundTruth.txt",
    "movie_reviews": "movieReviewSnippets_GroundTruth.txt",
    "amazon": "amazonReviewSnippets_GroundTruth.txt",
    "nyt": "nytEditorialSnippets_GroundTruth.txt",
}
_SDIST = "vaderSentiment-3.3.2.tar.gz"
_INNER = "vaderSentiment-3.3.2/additional_resources/hutto_ICWSM_2014.tar.gz"


@dataclass(frozen=True, slots=True)
class Sentence:
    id: str
    score: float
    text: str


def _data_dir() -> Path:
    return cache_dir() / "datasets" / "vader-3.3.2"


def _sdist_path() -> Path:
    env = os.environ.get("TEXTDP_VADER_SDIST")
    if env:
        return Path(env)
    target = cache_dir() / "datasets"
    path = target / _SDIST
    if not path.exists():
        target.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary",
               ":all:", "vadersentiment==3.3.2", "-d", str(target)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0 or not path.exists():
            raise RuntimeError(
                "could not obtain the vadersentiment==3.3.2 source distribution through pip "
                f"({proc.stderr.strip().splitlines()[-1:] or 'no output'}); download it by hand "
                "and set TEXTDP_VADER_SDIST to its path")
    return path


def _ensure_extracted() -> Path:
    out = _data_dir()
    if all((out / f).exists() for f in VADER_SETS.values()) and (out / "lexicon.txt").exists():
        return out
    with tarfile.open(_sdist_path()) as outer:
        inner_bytes = outer.extractfile(_INNER).read()
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(inner_bytes)) as inner:
        for member in inner.getmembers():
            name = Path(member.name).name
            if name in VADER_SETS.values() or name == "vader_sentiment_lexicon.txt":
                data = inner.extractfile(member).read()
                dest = out / ("lexicon.txt" if name == "vader_sentiment_lexicon.txt" else name)
                fd, tmp = tempfile.mkstemp(dir=out)
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.replace(tmp, dest)
    return out


def load_vader(name: str) -> list[Sentence]:
    """Sentences of one VADER set: ``tweets``, ``movie_reviews``, ``amazon`` or ``nyt``."""
    if name not in VADER_SETS:
        raise ValueError(f"unknown VADER set {name!r}; choose one of {', '.join(VADER_SETS)}")
    path = _ensure_extracted() / VADER_SETS[name]
    sentences = []
    with open(path, encoding="utf-8-sig", newline="") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if not line:
                continue
            ident, score, text = line.split("\t", 2)
            sentences.append(Sentence(ident, float(score), text))
    return sentences


def vader_lexicon() -> dict[str, float]:
    """The VADER lexicon: token → mean valence in [−4, 4] (7,500 entries)."""
    path = _ensure_extracted() / "lexicon.txt"
    lexicon = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) >= 2:
                lexicon[fields[0]] = float(fields[1])
    return lexicon
