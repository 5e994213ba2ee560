"""Labelled multi-sentence documents for SentDP experiments, obtained offline into the user cache.

SentDP (Meehan, Mrini & Chaudhuri, ACL 2022) needs *documents* — sequences of sentences — with a
label to measure utility. Three sets are rebuilt here from what the package managers serve; no
third-party text is committed to this repository:

``nyt`` (≈ 498 documents) and ``amazon`` (≈ 300 documents)
    The VADER sentence files (``vadersentiment==3.3.2`` source distribution, obtained by
    :mod:`textdp.datasets.vader` through ``pip download`` into ``<cache>/datasets/``) carry ids
    ``document_sentence``; sentences are regrouped by document in sentence order. Label =
    sign of the mean human sentiment score of the document's sentences: ``positive`` (> 0) or
    ``negative`` (< 0); documents whose mean is exactly 0 are left out.

``bible`` (1,189 documents)
    The chapters of the King James Bible from Debian's ``bible-kjv-text`` package (text) and
    ``bible-kjv`` (the ``bible`` program that decodes it). The first call, in this order:

    1. uses ``TEXTDP_BIBLE_KJV`` if it names a file of lines ``Ref<space>verse text`` (``Ge1:1 In
       the beginning…``, the output of ``bible -f gen1:1-rev22:21``);
    2. else runs an installed ``bible`` program (``apt-get install bible-kjv``);
    3. else runs ``apt-get download bible-kjv bible-kjv-text`` into
       ``<cache>/datasets/bible-kjv/debs`` (no root needed, nothing installed), unpacks both with
       ``dpkg-deb -x`` and runs the unpacked program on the unpacked data.

    The decoded verses are cached as ``<cache>/datasets/bible-kjv/kjv.txt``. A chapter's text is
    its verses joined by spaces, split into sentences by :func:`textdp.sentences.split_sentences`.
    Label = the division of the canon the book belongs to (six classes, :data:`BIBLE_DIVISIONS`).

``<cache>`` is :func:`textdp.vocab.cache_dir` (``TEXTDP_CACHE`` overrides it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from textdp.datasets.vader import load_vader
from textdp.vocab import cache_dir

__all__ = ["DOCUMENT_SETS", "BIBLE_DIVISIONS", "Document", "load_documents", "documents_from_vader"]

DOCUMENT_SETS = ("nyt", "amazon", "bible")

#: The six divisions of the (Protestant, 66-book) canon used as Bible labels, with the number of
#: consecutive books in each, in canonical order.
BIBLE_DIVISIONS: tuple[tuple[str, int], ...] = (
    ("law", 5),                    # Genesis–Deuteronomy
    ("history", 12),               # Joshua–Esther
    ("wisdom", 5),                 # Job–Song of Solomon
    ("prophets", 17),              # Isaiah–Malachi
    ("gospels_acts", 5),           # Matthew–Acts
    ("epistles_revelation", 22),   # Romans–Revelation
)
_N_BOOKS = 66
_BIBLE_RANGE = "gen1:1-rev22:21"
_VERSE = re.compile(r"^(\d?[A-Za-z]+)(\d+):(\d+) (.*)$")


@dataclass(frozen=True, slots=True)
class Document:
    """One labelled document: its id, label and sentences (the units SentDP protects)."""

    id: str
    label: str
    sentences: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.sentences)

    def __len__(self) -> int:
        return len(self.sentences)


def load_documents(name: str, *, min_sentences: int = 2) -> list[Document]:
    """The documents of one set (``nyt``, ``amazon`` or ``bible``) with at least ``min_sentences``.

    The paper keeps documents of at least 2 sentences (Meehan et al. 2022, App. A.3, "Dataset
    preprocessing"); that is the default here.
    """
    if name not in DOCUMENT_SETS:
        raise ValueError(f"unknown document set {name!r}; choose one of {', '.join(DOCUMENT_SETS)}")
    if isinstance(min_sentences, bool) or not isinstance(min_sentences, int) or min_sentences < 1:
        raise ValueError(f"min_sentences must be a positive integer, got {min_sentences!r}")
    docs = load_bible_chapters() if name == "bible" else documents_from_vader(load_vader(name))
    return [d for d in docs if len(d) >= min_sentences]


def documents_from_vader(sentences: Sequence) -> list[Document]:
    """Group VADER sentences (ids ``document_sentence``) into documents labelled by mean sentiment.

    Sentences are ordered by their sentence number; documents keep their first-appearance order.
    Documents whose mean score is exactly 0 carry no sign and are left out.
    """
    groups: OrderedDict[str, list[tuple[int, float, str]]] = OrderedDict()
    for s in sentences:
        doc, sep, num = s.id.partition("_")
        if not sep or not num.isdigit():
            raise ValueError(f"sentence id {s.id!r} is not of the form document_sentence")
        groups.setdefault(doc, []).append((int(num), float(s.score), s.text))
    out = []
    for doc, items in groups.items():
        items.sort(key=lambda t: t[0])
        mean = sum(t[1] for t in items) / len(items)
        if mean == 0:
            continue
        out.append(Document(doc, "positive" if mean > 0 else "negative",
                            tuple(t[2] for t in items)))
    return out


# ------------------------------------------------------------------------------------------------
# Bible


def _bible_dir() -> Path:
    return cache_dir() / "datasets" / "bible-kjv"


def _run_bible(program: str | Path, data_dir: str | Path | None) -> str:
    cmd = [str(program), "-f"]
    if data_dir is not None:
        cmd += ["-p", str(data_dir)]
    cmd.append(_BIBLE_RANGE)
    proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if proc.returncode != 0 or not proc.stdout.strip():
        raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr.strip()[-300:] or 'no output'}")
    return proc.stdout


def _download_debs(target: Path) -> tuple[Path, Path]:
    """``apt-get download`` the two packages into ``target`` and unpack them there."""
    debs = target / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    if not (shutil.which("apt-get") and shutil.which("dpkg-deb")):
        raise RuntimeError("the Bible set needs Debian's bible-kjv and bible-kjv-text packages: "
                           "apt-get and dpkg-deb were not found; set TEXTDP_BIBLE_KJV instead")
    if not list(debs.glob("bible-kjv-text_*.deb")) or not list(debs.glob("bible-kjv_*.deb")):
        proc = subprocess.run(["apt-get", "download", "bible-kjv", "bible-kjv-text"], cwd=debs,
                              capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            raise RuntimeError("apt-get download bible-kjv bible-kjv-text failed "
                               f"({proc.stderr.strip()[-300:]}); run 'apt-get update' first, or "
                               "install bible-kjv, or set TEXTDP_BIBLE_KJV")
    root = target / "root"
    for deb in sorted(debs.glob("*.deb")):
        subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True, capture_output=True)
    return root / "usr" / "bin" / "bible", root / "usr" / "lib"


def _bible_verses_text() -> str:
    env = os.environ.get("TEXTDP_BIBLE_KJV")
    if env:
        return Path(env).read_text(encoding="utf-8")
    target = _bible_dir()
    cached = target / "kjv.txt"
    if cached.exists():
        return cached.read_text(encoding="utf-8")
    installed = shutil.which("bible")
    if installed and Path("/usr/lib/bible.data").exists():
        text = _run_bible(installed, None)
    else:
        program, data = _download_debs(target)
        text = _run_bible(program, data)
    target.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, cached)
    return text


def parse_bible(text: str) -> list[Document]:
    """Chapters from lines ``Ref verse`` in canonical order, labelled by division of the canon.

    Books are numbered by order of first appearance, so the text must hold all 66 books in
    canonical order (as ``bible -f gen1:1-rev22:21`` prints them).
    """
    from textdp.sentences import split_sentences

    labels = [name for name, count in BIBLE_DIVISIONS for _ in range(count)]
    chapters: OrderedDict[tuple[str, int], list[str]] = OrderedDict()
    books: list[str] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        m = _VERSE.match(line.strip())
        if m is None:
            raise ValueError(f"line {n} is not a verse 'Ref text': {line[:60]!r}")
        book, chapter, _, verse = m.groups()
        if not books or books[-1] != book:
            if book in books:
                raise ValueError(f"line {n}: book {book!r} appears twice (not in canonical order)")
            books.append(book)
        chapters.setdefault((book, int(chapter)), []).append(verse.strip())
    if len(books) != _N_BOOKS:
        raise ValueError(f"expected the {_N_BOOKS} books of the canon, found {len(books)}")
    index = {b: i for i, b in enumerate(books)}
    return [Document(f"{book}{chapter}", labels[index[book]],
                     tuple(split_sentences(" ".join(verses))))
            for (book, chapter), verses in chapters.items()]


def load_bible_chapters() -> list[Document]:
    """The 1,189 chapters of the King James Bible (see the module docstring for how).

    Sentence splitting takes a while; the chapters are cached as JSON next to ``kjv.txt``, keyed
    by the splitter in use and a hash of the verse text.
    """
    import hashlib
    import json

    from textdp.sentences import splitter_name

    text = _bible_verses_text()
    key = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    cached = _bible_dir() / f"chapters-{splitter_name()}-{key}.json"
    if cached.exists():
        try:
            rows = json.loads(cached.read_text(encoding="utf-8"))
            return [Document(r[0], r[1], tuple(r[2])) for r in rows]
        except (ValueError, IndexError, TypeError):
            pass  # a corrupt cache is rebuilt below
    docs = parse_bible(text)
    cached.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=cached.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump([[d.id, d.label, list(d.sentences)] for d in docs], f)
    os.replace(tmp, cached)
    return docs
