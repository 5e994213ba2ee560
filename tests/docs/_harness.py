"""Executed documentation: find every fenced code block of README.md, docs/**/*.md (but the
generated docs/results/) and examples/, and run it.

A block's language says what it is:

* ``python`` / ``py`` — run in one namespace per page, in order (a page's later blocks may use
  what its earlier ones defined);
* ``sh`` / ``bash`` / ``shell`` — run by ``bash -eo pipefail`` (``textdp`` is this checkout's);
* ``console`` — the lines starting with ``$ `` are run as above; the others are shown output;
* ``text``, ``json``, ``toml``, ``yaml``, ``diff`` — shown output, file contents, synopses, tables:
  not code, not run. A block with no language is an error: say which it is.

An HTML comment on the line(s) just above a fence marks the block:

* ``<!-- docs: skip (reason) -->`` — not runnable, and why (a cluster, a download, a placeholder);
* ``<!-- docs: long (reason) -->`` — run by ``make docs-check`` only, not by ``make test``;
* ``<!-- docs: setup CODE -->`` — CODE runs first, hidden from the reader, in the block's
  language (e.g. ``cp reviews.txt in.txt``);
* ``<!-- docs: figure NAME key=value … -->`` — the prose that follows quotes figures that
  :mod:`tests.docs.figures` recomputes and compares within a stated tolerance.

Every page runs in its own temporary directory holding a copy of examples/ (also its files at the
top level, so ``reviews.txt`` is there; not for README.md, which runs as in a clone's root, so a
new user's copy-paste works as written) — never in the checkout.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN = {"python": "python", "py": "python", "sh": "sh", "bash": "sh", "shell": "sh",
       "console": "console"}
SHOWN = {"text", "json", "toml", "yaml", "diff", "jsonl", "csv", "markdown", "md"}
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})[ \t]*(?P<lang>[^\s`]*)")
_MARK = re.compile(r"^\s*<!--\s*docs:\s*(?P<kind>skip|long|setup|figure)\b\s*(?P<arg>.*?)\s*-->\s*$")


@dataclass
class Block:
    path: str            # relative to the repository root
    line: int            # the line of the opening fence (1-based)
    lang: str            # as written
    code: str
    marks: dict[str, str] = field(default_factory=dict)
    setup: list[str] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return RUN.get(self.lang.lower(), "shown" if self.lang.lower() in SHOWN else "unknown")

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def pages() -> list[Path]:
    """README.md, docs/**/*.md except the generated docs/results/, examples/**/*.md."""
    found = [ROOT / "README.md"]
    found += sorted(p for p in (ROOT / "docs").rglob("*.md")
                    if "results" not in p.relative_to(ROOT / "docs").parts[:1])
    found += sorted((ROOT / "examples").rglob("*.md"))
    return [p for p in found if p.is_file()]


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown page with the marks on the lines just above each."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, indent = m.group("fence"), len(m.group("indent"))
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        body = "\n".join(line[indent:] if line[:indent].strip() == "" else line
                         for line in lines[i + 1:j])
        block = Block(str(path.relative_to(ROOT)), i + 1, m.group("lang"), body + "\n")
        k = i - 1
        while k >= 0 and _MARK.match(lines[k]):
            mark = _MARK.match(lines[k])
            if mark.group("kind") == "setup":
                block.setup.insert(0, mark.group("arg"))
            else:
                block.marks[mark.group("kind")] = mark.group("arg")
            k -= 1
        out.append(block)
        i = j + 1
    return out


def figure_marks(path: Path) -> list[tuple[int, str, str]]:
    """(line, mark argument, the paragraph after it) of every ``docs: figure`` mark."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    for i, line in enumerate(lines):
        m = _MARK.match(line)
        if m and m.group("kind") == "figure":
            para = []
            for nxt in lines[i + 1:]:
                if not nxt.strip():
                    break
                para.append(nxt)
            found.append((i + 1, m.group("arg"), " ".join(para)))
    return found


def workdir(tmp: Path, *, top_level: bool = True) -> Path:
    """A temporary directory with examples/ copied in (and its files at the top level, unless
    ``top_level`` is False: the README runs as in a fresh clone's root, where reviews.txt is
    examples/reviews.txt, so its commands must name it so)."""
    shutil.copytree(ROOT / "examples", tmp / "examples")
    for p in (ROOT / "examples").iterdir():
        if p.is_file() and top_level:
            shutil.copy(p, tmp / p.name)
    return tmp


def environment() -> dict[str, str]:
    """This checkout's textdp first on the path, for Python and for the ``textdp`` command."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT)]
                                        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["MPLBACKEND"] = "Agg"
    return env


def run_page(selected: list[Block], tmp: Path, timeout: float) -> None:
    """Run the blocks of one page in one child process; AssertionError naming the block on a
    failure (file, line, the code, its output's tail)."""
    workdir(tmp, top_level=selected[0].path != "README.md")
    spec = tmp / ".docs-blocks.json"
    spec.write_text(json.dumps([asdict(b) | {"kind": b.kind} for b in selected]), encoding="utf-8")
    try:
        proc = subprocess.run([sys.executable, str(Path(__file__).with_name("_runner.py")),
                               str(spec)], cwd=tmp, env=environment(), capture_output=True,
                              text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        tail = ((exc.stdout or "") + (exc.stderr or ""))[-3000:] if isinstance(exc.stdout, str) else ""
        raise AssertionError(f"{selected[0].path}: timed out after {timeout:.0f} s\n{tail}") from None
    if proc.returncode != 0:
        result = _last_json(proc.stdout)
        if result is None:
            raise AssertionError(f"{selected[0].path}: the runner failed (status {proc.returncode})"
                                 f"\n{(proc.stdout + proc.stderr)[-3000:]}")
        raise AssertionError(
            f"{result['where']}: this {result['kind']} block failed\n--- the block ---\n"
            f"{result['code'].rstrip()}\n--- its output (tail) ---\n{result['output'][-3000:]}")


def _last_json(stdout: str) -> dict | None:
    for line in reversed(stdout.splitlines()):
        if line.startswith("@@docs-failure "):
            return json.loads(line[len("@@docs-failure "):])
    return None
