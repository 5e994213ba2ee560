"""Reports as Markdown and as one self-contained HTML file, from the same document.

A report is built once as a list of blocks (:class:`Document`) and rendered twice:

* :meth:`Document.markdown` — GitHub-flavoured Markdown; images are links to PNG files next to it;
* :meth:`Document.html` — a single HTML file with inline CSS and the PNGs embedded as
  ``data:image/png;base64`` URIs: it can be mailed or archived alone, needs no network, and has
  no scripts.
"""

from __future__ import annotations

import base64
import html
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textdp.privacy import format_up

__all__ = ["Document", "fmt", "write_report"]

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}
h1{border-bottom:2px solid #ddd;padding-bottom:.2em}h2{border-bottom:1px solid #eee;margin-top:1.6em}
table{border-collapse:collapse;margin:.8em 0;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .6em}th{background:#f4f4f4}
td.n{text-align:right;font-variant-numeric:tabular-nums}
img{max-width:100%;height:auto;border:1px solid #eee;margin:.5em 0}
pre{background:#f6f8fa;padding:.8em;overflow-x:auto;font-size:.85em}
code{background:#f6f8fa;padding:0 .2em}
.note{color:#555;font-size:.9em}
"""

_NUMERIC = re.compile(r"^[\s−+\-–]?[\d.,]+(e[+\-]?\d+)?\s*%?$|^–$|^n/a$")


def fmt(x: Any, digits: int = 3) -> str:
    """A number for a table: ``digits`` significant figures, "–" for None/NaN."""
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        if x != x:
            return "–"
        if x != 0 and (abs(x) >= 1e6 or abs(x) < 1e-3):
            return f"{x:.{digits - 1}e}"
        return f"{x:.{digits}g}" if abs(x) < 1000 else f"{x:,.0f}"
    return str(x)


@dataclass
class Document:
    """An ordered list of blocks: headings, paragraphs, tables, images, preformatted text."""

    title: str
    blocks: list[tuple[str, Any]] = field(default_factory=list)

    def heading(self, text: str, level: int = 2) -> Document:
        self.blocks.append(("h", (level, text)))
        return self

    def paragraph(self, text: str, *, note: bool = False) -> Document:
        self.blocks.append(("p", (text, note)))
        return self

    def bullets(self, items: Sequence[str]) -> Document:
        self.blocks.append(("ul", list(items)))
        return self

    def table(self, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> Document:
        self.blocks.append(("table", (list(header), [[fmt(c) for c in r] for r in rows])))
        return self

    def image(self, path: str | Path, alt: str) -> Document:
        self.blocks.append(("img", (Path(path), alt)))
        return self

    def pre(self, text: str) -> Document:
        self.blocks.append(("pre", text))
        return self

    # --- renderers ----------------------------------------------------------------------------
    def markdown(self, base: str | Path | None = None) -> str:
        """Markdown; image paths relative to ``base`` (the directory the .md file goes to)."""
        out = [f"# {self.title}", ""]
        for kind, data in self.blocks:
            if kind == "h":
                level, text = data
                out += [f"{'#' * level} {text}", ""]
            elif kind == "p":
                text, note = data
                out += [f"*{text}*" if note else text, ""]
            elif kind == "ul":
                out += [f"- {item}" for item in data] + [""]
            elif kind == "table":
                header, rows = data
                align = ["---:" if rows and all(_NUMERIC.match(r[i]) for r in rows) else "---"
                         for i in range(len(header))]
                out.append("| " + " | ".join(_md_cell(h) for h in header) + " |")
                out.append("|" + "|".join(align) + "|")
                out += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in rows]
                out.append("")
            elif kind == "img":
                path, alt = data
                rel = os.path.relpath(path, base) if base is not None else str(path)
                out += [f"![{alt}]({Path(rel).as_posix()})", ""]
            elif kind == "pre":
                out += ["```", data.rstrip("\n"), "```", ""]
        return "\n".join(out).rstrip() + "\n"

    def html(self) -> str:
        """One self-contained HTML page (inline CSS, PNGs as data URIs, no scripts)."""
        e = html.escape
        out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
               '<meta name="viewport" content="width=device-width, initial-scale=1">',
               f"<title>{e(self.title)}</title>", f"<style>{_CSS}</style>", "</head>", "<body>",
               f"<h1>{e(self.title)}</h1>"]
        for kind, data in self.blocks:
            if kind == "h":
                level, text = data
                out.append(f"<h{level}>{_inline(text)}</h{level}>")
            elif kind == "p":
                text, note = data
                out.append(f'<p class="note">{_inline(text)}</p>' if note else f"<p>{_inline(text)}</p>")
            elif kind == "ul":
                out.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in data) + "</ul>")
            elif kind == "table":
                header, rows = data
                out.append("<table><thead><tr>" + "".join(f"<th>{_inline(h)}</th>" for h in header)
                           + "</tr></thead><tbody>")
                for r in rows:
                    cells = "".join(f'<td class="n">{_inline(c)}</td>' if _NUMERIC.match(c)
                                    else f"<td>{_inline(c)}</td>" for c in r)
                    out.append(f"<tr>{cells}</tr>")
                out.append("</tbody></table>")
            elif kind == "img":
                path, alt = data
                data64 = base64.b64encode(Path(path).read_bytes()).decode("ascii")
                out.append(f'<figure><img alt="{e(alt)}" src="data:image/png;base64,{data64}">'
                           f"<figcaption class=\"note\">{e(alt)}</figcaption></figure>")
            elif kind == "pre":
                out.append(f"<pre>{e(data)}</pre>")
        out += ["</body>", "</html>", ""]
        return "\n".join(out)


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*([^*]+)\*\*")


def _inline(text: str) -> str:
    """Escape, then the two Markdown inline forms the reports use: `code` and **bold**."""
    t = html.escape(str(text))
    t = _CODE.sub(r"<code>\1</code>", t)
    return _BOLD.sub(r"<strong>\1</strong>", t)


def write_report(doc: Document, out_dir: str | Path, stem: str = "report") -> dict[str, Path]:
    """Write ``stem.md`` and ``stem.html`` into ``out_dir`` (atomically); return their paths."""
    from textdp.io import AtomicFiles

    out_dir = Path(out_dir)
    md, page = out_dir / f"{stem}.md", out_dir / f"{stem}.html"
    with AtomicFiles() as files:
        files.write_bytes(md, doc.markdown(out_dir).encode("utf-8"))
        files.write_bytes(page, doc.html().encode("utf-8"))
    return {"markdown": md, "html": page}


# --- the privacy report of a release (`textdp privatize / embed / docembed --report`) ---------
def rebuild_mechanism(report: dict[str, Any]) -> tuple[Any, str | None]:
    """The mechanism of a word report, rebuilt from its name and parameters on the same vocabulary.

    Returns ``(mechanism, None)``, or ``(None, reason)`` when it cannot be rebuilt exactly (not a
    word mechanism, another vocabulary, a parameter that is not a plain value, or parameters that
    come out different).
    """
    from textdp import mechanisms as registry
    from textdp.evaluation._common import jsonable
    from textdp.mechanisms._signature import keyword_parameters

    if report.get("kind", "word") != "word":
        return None, f"plausible deniability is measured for word mechanisms, not {report['kind']}"
    mech = report.get("mechanism", {})
    name, params = mech.get("name"), dict(mech.get("parameters", {}))
    try:
        cls = registry.get(name)
    except ValueError as exc:
        return None, str(exc)
    vocab = _report_vocabulary(report.get("vocabulary", {}))
    if vocab is None:
        return None, "the run used a vocabulary other than textdp's named ones"
    accepted = keyword_parameters(cls) or []

    def plain(v: Any) -> bool:
        return isinstance(v, (str, int, float, bool)) or (
            isinstance(v, list) and all(isinstance(x, (str, int, float, bool)) for x in v))

    kwargs = {k: v for k, v in params.items() if k in accepted and k != "epsilon" and plain(v)}
    try:
        rebuilt = registry.create(name, vocab, epsilon=params["epsilon"], **kwargs)
    except (KeyError, TypeError, ValueError) as exc:
        return None, f"could not rebuild {name}: {exc}"
    if jsonable(rebuilt.parameters) != jsonable(params):
        differ = sorted(k for k in set(params) | set(rebuilt.parameters)
                        if jsonable(params.get(k)) != jsonable(rebuilt.parameters.get(k)))
        return None, f"rebuilding {name} gives different parameters ({', '.join(differ)})"
    return rebuilt, None


def _report_vocabulary(described: dict[str, Any]) -> Any:
    """The default GloVe vocabulary, or a named one, that a report names by fingerprint, or None."""
    from textdp.vocab import NAMES, load, load_default

    fingerprint = described.get("fingerprint")
    vocab = load_default()
    if vocab.fingerprint != fingerprint:
        m = re.search(r"wordfreq-top(\d+)(-alpha)?$", str(described.get("name")))
        if m:
            vocab = load_default(int(m.group(1)), alphabetic_only=bool(m.group(2)))
        elif described.get("name") in NAMES:  # a named one, e.g. glove-840b-300d
            vocab = load(described["name"])
    return vocab if vocab.fingerprint == fingerprint else None


def run_report_document(report: dict[str, Any], out_dir: str | Path, *,
                        deniability_words: int | None = None, draws: int = 1000,
                        rng: Any = None) -> Document:
    """A readable page of a privacy report of any kind (word, embedding, document).

    With ``deniability_words`` (word reports) the mechanism is rebuilt (when possible, see
    :func:`rebuild_mechanism`) and N_w / S_w are measured on that many random words.
    """
    from textdp.privacy.report import summary_line

    out_dir = Path(out_dir)
    g = report["guarantee"]
    doc = Document(f"Privacy report: {report['mechanism']['name']}, ε = {format_up(g['epsilon'])}")
    try:
        doc.paragraph(summary_line(report))
    except (KeyError, TypeError):
        pass
    for w in report.get("warnings", []):
        doc.paragraph(f"**Warning:** {w}")
    if not g.get("verified", True):
        doc.paragraph("**No formal guarantee could be established for these parameters.**"
                      if report.get("kind", "word") == "word" else
                      "**The guarantee rests on unverified assumptions (listed below).**")
    _guarantee_section(doc, g)
    _mechanism_section(doc, report)
    if report.get("kind", "word") == "word":
        _word_sections(doc, report, out_dir)
    else:
        _generic_sections(doc, report)
    _unprotected_section(doc, report.get("unprotected", []))
    if isinstance(report.get("ledger"), dict):
        doc.heading("Ledger")
        _table(doc, "ledger", report["ledger"])
    _run_section(doc, report)
    if deniability_words:
        _deniability_section(doc, report, out_dir, deniability_words, draws, rng)
    return doc


def _table(doc: Document, title: str, section: dict[str, Any]) -> None:
    """A two-column table of a report section; nested sections become rows ``outer · inner``."""
    doc.table([title, "value"], [[k, _cell(v)] for k, v in _flat(section)])


def _flat(section: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = []
    for key, value in section.items():
        name = prefix + key.replace("_", " ")
        if isinstance(value, dict) and value:
            rows += _flat(value, name + " · ")
        else:
            rows.append((name, value))
    return rows


def _cell(value: Any) -> Any:
    return value if isinstance(value, (int, float, str, bool)) or value is None else _short(value)


def _guarantee_section(doc: Document, g: dict[str, Any]) -> None:
    doc.heading("Guarantee")
    rows = [["notion", g.get("notion")], ["ε", g.get("epsilon")], ["metric", g.get("metric")],
            ["per word", g.get("per_word")], ["per document", g.get("per_document")],
            ["δ", g.get("delta")], ["verified", g.get("verified")],
            ["reference", g.get("reference")]]
    rows += [["assumption", a] for a in g.get("assumptions", [])]
    doc.table(["", "value"], [r for r in rows if r[1] is not None])


def _mechanism_section(doc: Document, report: dict[str, Any]) -> None:
    mech = report["mechanism"]
    doc.heading("Mechanism")
    doc.table(["parameter", "value"],
              [[k, _cell(v)] for k, v in mech.get("parameters", {}).items()])
    details = {k: v for k, v in mech.items() if k not in ("name", "parameters")}
    if details:
        _table(doc, "mechanism", details)


def _word_sections(doc: Document, report: dict[str, Any], out_dir: Path) -> None:
    from textdp.evaluation import plots

    vocab = report.get("vocabulary", {})
    if vocab:
        doc.table(["vocabulary", "value"], [[k, v] for k, v in vocab.items()])
    doc.heading("Documents and tokens")
    docs = report.get("documents", {})
    if docs:
        doc.table(["documents", "count"], [[k.replace("_", " "), v] for k, v in docs.items()])
    tokens = report.get("tokens", {})
    by_class, by_policy = tokens.get("by_class", {}), tokens.get("by_policy", {})
    if by_class or by_policy:
        doc.table(["token class", "tokens"], [[k, v] for k, v in by_class.items()]
                  + [["total", tokens.get("total")]])
        doc.table(["what happened", "tokens"], [[k.replace("_", " "), v] for k, v in by_policy.items()])
        doc.image(plots.token_plot(by_class, by_policy, out_dir / "tokens.png"),
                  "Tokens by class, and what happened to words and numbers")
    policy = report.get("policy")
    if policy:
        doc.table(["policy", "value"], [[k, v] for k, v in policy.items()])


def _generic_sections(doc: Document, report: dict[str, Any]) -> None:
    """Inputs and counts of an embedding or document release, one table each."""
    inputs = report.get("inputs") or {}
    if inputs:
        doc.heading("Inputs")
        _table(doc, "input", inputs)
    counts = report.get("counts") or {}
    if counts:
        doc.heading("Counts")
        _table(doc, "released", counts)


def _unprotected_section(doc: Document, unprotected: list[dict[str, Any]]) -> None:
    doc.heading("Released without protection")
    if unprotected:
        doc.table(["what", "count", "why"], [[u.get("kind"), u.get("count"), u.get("why")]
                                             for u in unprotected])
    else:
        doc.paragraph("Nothing.")


def _run_section(doc: Document, report: dict[str, Any]) -> None:
    doc.heading("Randomness, performance, files")
    doc.table(["randomness", "value"], [[k, v] for k, v in report.get("randomness", {}).items()])
    perf = report.get("performance", {})
    if perf:
        doc.table(["performance", "value"], [[k.replace("_", " "), v] for k, v in perf.items()])
    io = report.get("io")
    if io:
        doc.table(["files", "value"], [[k.replace("_", " "), v] for k, v in io.items()])
    doc.paragraph(f"textdp {report.get('textdp_version', '?')}, {report.get('kind', 'word')} "
                  f"report created {report.get('created', '?')} (schema "
                  f"{report.get('schema', '?')}).", note=True)


def _deniability_section(doc: Document, report: dict[str, Any], out_dir: Path, words: int,
                         draws: int, rng: Any) -> None:
    from textdp.evaluation import plots
    from textdp.evaluation.deniability import plausible_deniability

    doc.heading("Plausible deniability of this mechanism")
    mechanism, reason = rebuild_mechanism(report)
    if mechanism is None:
        doc.paragraph(f"Not measured: {reason}.")
        return
    d = plausible_deniability(mechanism, words, draws, rng)
    dd = d.to_dict()
    w = d.worst()
    doc.paragraph(
        f"Over {len(d.words)} random vocabulary words ({d.method.replace('_', ' ')}, "
        f"{draws} draws): N_w = Pr[M(w) = w] has mean {fmt(dd['n_w']['mean'])} and worst "
        f"case {fmt(w['max_n_w'])} (`{w['max_n_w_word']}`); S_w (distinct outputs) has "
        f"mean {fmt(dd['distinct']['mean'])} and worst case {fmt(w['min_distinct'])} "
        f"(`{w['min_distinct_word']}`).")
    doc.image(plots.deniability_histograms([dd], out_dir / "deniability.png",
                                           title=f"{mechanism.name}, ε = {format_up(d.epsilon)}"),
              "Histograms of S_w and N_w over the sampled words")


def _short(value: Any, limit: int = 160) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
