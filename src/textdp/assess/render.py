"""The assessment's reports: JSON (one row per setting), Markdown and self-contained HTML.

Every figure comes with one sentence saying what it means; the HTML embeds the risk-against-
utility plot (one panel per mechanism, matplotlib, PNG in base64) so that the file stands alone.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textdp.assess.core import Assessment

__all__ = ["to_json", "to_markdown", "to_html", "frontier_png", "meanings", "attackers",
           "PRIVACY_AXES", "HONESTY"]

#: What every assessment report says about itself first.
HONESTY = ("This assessment computed on your original, private documents and is not itself "
           "private: its figures, tables and any example it holds describe your data. It is for "
           "the data owner only: do not publish or share it. Nothing was released, no private "
           "text was written anywhere, and no privacy budget was spent (no ledger was used).")


def _pct(x: float | None, digits: int = 1) -> str:
    return "–" if x is None else f"{100 * x:.{digits}f}%"


def _times(x: float | None, chance: float | None) -> str:
    return f"{x / chance:.1f}×" if x is not None and chance else "–"


def _interval(iv: Any, pct: bool = True) -> str:
    if iv is None:
        return ""
    lo, hi = iv
    return f"{_pct(lo)}–{_pct(hi)}" if pct else f"{lo:.3f}–{hi:.3f}"


def to_json(a: Assessment) -> str:
    """The whole assessment as JSON (NaN and infinities as null)."""
    def clean(v: Any) -> Any:
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [clean(x) for x in v]
        if hasattr(v, "item"):  # numpy scalars
            return clean(v.item())
        return v

    return json.dumps(clean(a.to_dict()), indent=2, ensure_ascii=False) + "\n"


def _eps(x: float | None) -> str:
    if x is None:
        return "∞"
    from textdp.privacy import format_up

    return format_up(x, 3)


def _scale_sentence(row: dict[str, Any]) -> str | None:
    """The document-level (and per-person) guarantee of ``row`` in one sentence."""
    g = row.get("document_guarantee")
    if not g:
        return None
    med, p90 = g["median"], g["p90"]
    if g.get("scale") == "one" and med["epsilon"] is not None:
        return (f"**Whole document** (the ledger's code): a whole document is one {g['unit']}: "
                f"ε ≤ {_eps(med['epsilon'])}" + (f", δ ≤ {_eps(med['delta'])}" if med["delta"]
                                                else "") + _persons_clause(g)
                + (f" ({g['domain']})" if g.get("domain") else "") + ".")
    text = (f"**Whole document** (the ledger's guarantee): a document of your data's median "
            f"length ({med['units']} {g['unit']}s) gets ε ≤ {_eps(med['epsilon'])}, one of its "
            f"90th-percentile length ({p90['units']}) ε ≤ {_eps(p90['epsilon'])}"
            + (f" (δ ≤ {_eps(p90['delta'])})" if p90["delta"] else ""))
    text += _persons_clause(g)
    return text + (f" — unbounded: {g['why']}." if med["epsilon"] is None and g["why"] else
                   f" ({g['domain']})." if g.get("domain") else ".")


def _persons_clause(g: dict[str, Any]) -> str:
    persons = g.get("persons")
    text = ""
    if persons:
        pm, pp = persons["median"], persons["p90"]

        def size(p: dict[str, Any]) -> str:
            return ("" if g.get("scale") == "one" else f", {p['units']} {g['unit']}s")

        text += (f"; a person of median exposure ({pm['documents']} document(s){size(pm)}) "
                 f"ε ≤ {_eps(pm['epsilon'])}, of the 90th percentile "
                 f"({pp['documents']} document(s){size(pp)}) ε ≤ {_eps(pp['epsilon'])}")
    return text


def attackers(meta: dict[str, Any] | None) -> list[str]:
    """One sentence per attack the assessment ran: which attacker it models."""
    from textdp.assess.attacks import ATTACKERS

    meta = meta or {}
    out = [f"**Document linkage** models {ATTACKERS['linkage']}."]
    out += [FORM_METRICS[f] for f in meta.get("forms", ()) if f in FORM_METRICS]
    originals = meta.get("originals") or {}
    if "author_linkage" in originals:
        out.append(f"**Author linkage** models {ATTACKERS['author_linkage']}.")
    if "attribute" in originals:
        field = meta.get("sensitive_field") or "sensitive value"
        out.append(f"**Attribute inference** models "
                   f"{ATTACKERS['attribute'].format(field=field)}.")
    return out


#: Per release form, which attacker and which metrics apply (the report's words).
FORM_METRICS = {
    "words": "**Word mechanisms** (form `words`): the private text is attacked as text (word and "
             "character TF-IDF, MiniLM); leakage counts entities and identifiers of the "
             "original found verbatim in it; utility is MiniLM similarity and a TF-IDF + "
             "logistic-regression classifier.",
    "embeddings": "**PrivEmb embeddings** (form `embeddings`): the attacker holds the originals "
                  "and the public maps (the encoder and PrivEmb's public projection Φ), computes "
                  "each original's noise-free Φx and picks the nearest to the released vector "
                  "(Euclidean or cosine, the stronger); leakage does not apply (no text is "
                  "released); utility is logistic regression on the vectors and the cosine of "
                  "the released vector with Φx.",
    "prompt": "**DP-Prompt paraphrases** (form `prompt`): text, attacked and measured as the "
              "word mechanisms' (linkage, author and attribute attacks, entities surviving, "
              "similarity, the TF-IDF classifier); no word tally (it rewrites whole documents); "
              "its guarantee is pure ε-DP per whole document.",
    "synthetic": "**Synthetic text** (form `synthetic`, synthesize's Private Evolution on the "
                 "training part of the task split): a new corpus, so no per-document attack "
                 "applies; as for `textdp synthesize`, the originals' identifiers found in the "
                 "output (entities column), 8-word sequences unique to one original found in it "
                 "(memorisation) and originals with a synthetic near-copy closer than their own "
                 "nearest other original are counted; utility is the TF-IDF classifier trained "
                 "on the synthetic documents and tested on the held-out originals; the guarantee "
                 "is synthesize's dataset-level (ε, δ).",
    "baseline": "**Zero-private-data baseline** (form `baseline`, a reference): the language "
                "model writes documents from the label names alone (synthesize's first "
                "prompts, ε = 0); its task accuracy is a TF-IDF + logistic-regression "
                "classifier trained on them and tested on the held-out originals. Linkage and "
                "leakage do not apply (nothing of the data is in it); a setting whose accuracy "
                "is not above it pays privacy for nothing.",
    "documents": "**DeepCandidate document embeddings** (form `documents`): the attacker holds "
                 "the originals, the encoder and the public candidates, and picks the original "
                 "whose mean sentence embedding is nearest to the released candidate (Euclidean "
                 "or cosine); leakage does not apply (the release is one public candidate); "
                 "utility is logistic regression on the vectors and the cosine of the released "
                 "candidate with the document's mean sentence embedding.",
}


def _vector_meanings(row: dict[str, Any], labels: dict[str, Any] | None) -> list[str]:
    """Each number of a vector setting's ``row`` (forms ``embeddings``, ``documents``)."""
    c1, c5 = row["linkage_chance"], row["linkage_chance_top5"]
    clean = "Φx" if row["form"] == "embeddings" else "mean sentence embedding"
    out = [f"**Linkage**: an attacker who holds your originals and the public maps links "
           f"{_pct(row['linkage_top1'])} of the released vectors to their original at the first "
           f"guess ({_times(row['linkage_top1'], c1)} chance, which is {_pct(c1, 2)}; 95% "
           f"interval {_interval(row['linkage_top1_interval'])}) and {_pct(row['linkage_top5'])} "
           f"within five ({_times(row['linkage_top5'], c5)} chance); strongest attack: "
           f"{row['linkage_attack']}."]
    scale = _scale_sentence(row)
    if scale:
        out.append(scale)
    out.append(f"**Leakage**: {row['leakage']}.")
    out.append(f"**Similarity**: each released vector has a mean cosine of "
               f"{row['similarity']:.2f} with its original's {clean} (1: the same vector).")
    if row["task_accuracy"] is not None and labels is not None:
        out.append(f"**Task accuracy**: logistic regression trained and tested on the released "
                   f"vectors predicts the label with {_pct(row['task_accuracy'])} accuracy "
                   f"({_interval(row['task_accuracy_interval'])}); trained on the originals' "
                   f"{clean} and tested on released vectors, "
                   f"{_pct(row['task_accuracy_clean_train'])}; a TF-IDF classifier on the "
                   f"original texts {_pct(labels['accuracy'])}, always guessing the most "
                   f"frequent label {_pct(labels['chance'])}.")
    return out


def _synthetic_meanings(row: dict[str, Any], labels: dict[str, Any] | None) -> list[str]:
    """Each number of a synthetic release's ``row``."""
    if row.get("refused"):
        return [f"**Refused**: synthesize refused this ε on the training documents: "
                f"{row['refused']}"]
    p = row["practice"]
    out = [_scale_sentence(row) or "",
           f"**Leakage**: {p['identifiers_found']} of the {p['identifiers_checked']} names and "
           f"identifiers of the training originals occur in the synthetic documents; "
           f"{row['memorised_documents']} original(s) have an 8-word sequence of their own in "
           f"them, and {row['near_copies']} have a synthetic document closer to them than "
           "their own nearest other original (a near-copy)."]
    if labels is not None and row["task_accuracy"] is not None:
        out.append(f"**Task accuracy**: the TF-IDF + logistic-regression classifier trained on "
                   f"the synthetic documents predicts the held-out originals' label with "
                   f"{_pct(row['task_accuracy'])} accuracy "
                   f"({_interval(row['task_accuracy_interval'])}); trained on the originals "
                   f"{_pct(labels['accuracy'])}, always guessing the most frequent label "
                   f"{_pct(labels['chance'])}.")
    return [x for x in out if x]


def meanings(row: dict[str, Any], labels: dict[str, Any] | None,
             meta: dict[str, Any] | None = None) -> list[str]:
    """Each number of ``row`` in one sentence."""
    if row.get("form") == "synthetic":
        return _synthetic_meanings(row, labels)
    if row.get("form", "words") not in ("words", "prompt"):
        return _vector_meanings(row, labels)
    out = []
    originals = (meta or {}).get("originals") or {}
    c1, c5 = row["linkage_chance"], row["linkage_chance_top5"]
    out.append(f"**Linkage**: an attacker who holds your originals links "
               f"{_pct(row['linkage_top1'])} of the private documents back to their original at "
               f"the first guess ({_times(row['linkage_top1'], c1)} chance, which is "
               f"{_pct(c1, 2)}; 95% interval {_interval(row['linkage_top1_interval'])}) and "
               f"{_pct(row['linkage_top5'])} within five guesses "
               f"({_times(row['linkage_top5'], c5)} chance); strongest attack: "
               f"{row['linkage_attack']}.")
    authors = row.get("author_linkage")
    if authors and authors.get("top1") is not None:
        base = originals.get("author_linkage") or {}
        out.append(f"**Author linkage**: from each person's other documents, the attacker names "
                   f"the author of {_pct(authors['top1'])} of the private documents at the first "
                   f"guess (95% interval {_interval(authors['top1_interval'])}; chance "
                   f"{_pct(authors['chance_top1'], 2)} among {authors['persons']} persons) and "
                   f"{_pct(authors['top5'])} within five; on the originals themselves "
                   f"{_pct(base.get('top1'))}. Counted over the {authors['documents']} sampled "
                   f"documents whose person has another one in the sample (of those the "
                   f"strongest attack, {authors['attack']}, saw).")
    attribute = row.get("attribute")
    if attribute:
        base = originals.get("attribute") or {}
        out.append(f"**Attribute inference**: the attacker infers the sensitive value of "
                   f"{_pct(attribute['accuracy'])} of the private test documents (95% interval "
                   f"{_interval(attribute['accuracy_interval'])}; {attribute['attack']}); "
                   f"always guessing the most frequent value {_pct(base.get('chance'))}, the "
                   f"same classifier on the originals {_pct(base.get('originals'))}.")
    scale = _scale_sentence(row)
    if scale:
        out.append(scale)
    if row["entities_found"]:
        kinds = ", ".join(f"{k} {v['survived']}/{v['found']}"
                          for k, v in sorted(row["entities_by_kind"].items()))
        out.append(f"**Entities**: {row['entities_survived_count']} of the "
                   f"{row['entities_found']} names, places, organisations, addresses and "
                   f"identifiers that textdp's recognisers find in the sampled originals appear "
                   f"verbatim in the private text ({_pct(row['entities_survived'])}; {kinds}).")
    else:
        out.append("**Entities**: textdp's recognisers found no names, places, organisations, "
                   "addresses or identifiers in the sample, so none could survive.")
    ind = row.get("independent_leakage")
    if ind:
        from textdp.assess.independent import CANNOT_SEE

        kinds = ", ".join(f"{k} {v['survived']}/{v['found']}" for k, v in sorted(
            ind["by_kind"].items()))
        out.append(f"**Leakage, counted independently** (recognisers the release did not use): "
                   f"{ind['survived']} of {ind['found']} proper-noun-like words and long "
                   f"numbers of the originals survive ({kinds or 'none found'}), and the entity "
                   f"model reading the private text finds {ind['model_survivors']} name(s) of "
                   f"the original in it; {_pct(row['documents_leaking'])} of the documents "
                   f"leak at least one (95% interval {_interval(row['documents_leaking_interval'])}"
                   f"). This count cannot see {CANNOT_SEE}.")
    if row["words_unchanged"] is not None:
        out.append(f"**Words unchanged**: {_pct(row['words_unchanged'])} of the words the "
                   "mechanism privatised came back as themselves (N_w on your data): each such "
                   "word is plausibly deniable, but it is the original word.")
    out.append(f"**Similarity**: the private text keeps a mean MiniLM cosine similarity of "
               f"{row['similarity']:.2f} with its original (1: the same meaning; near 0: "
               f"unrelated sentences).")
    if row["task_accuracy"] is not None and labels is not None:
        out.append(f"**Task accuracy**: a TF-IDF + logistic-regression classifier trained and "
                   f"tested on private text predicts the label with {_pct(row['task_accuracy'])} "
                   f"accuracy ({_interval(row['task_accuracy_interval'])}); trained on the "
                   f"originals and tested on private text, {_pct(row['task_accuracy_clean_train'])}"
                   f"; on the originals {_pct(labels['accuracy'])}, and always guessing the most "
                   f"frequent label {_pct(labels['chance'])}.")
    if row["words_per_second"]:
        out.append(f"**Cost**: {row['words_per_second']:,.0f} words per second on this machine "
                   "(the entity and identifier stage included).")
    return out


def _table(a: Assessment) -> tuple[list[str], list[list[str]]]:
    labels = a.meta.get("labels")
    persons = any(r.get("person_epsilon_median") is not None or r.get("author_linkage")
                  for r in a.rows)
    head = ["setting", "form", "ε", "ε whole document (median / p90)"]
    if persons:
        head.append("ε person (median / p90)")
    head += ["entities survived", "survivors (independent count)", "words unchanged",
             "linkage top-1 (× chance)",
             "linkage top-5"]
    if any(r.get("author_linkage") for r in a.rows):
        head.append("author linkage top-1 (× chance)")
    if any(r.get("attribute") for r in a.rows):
        head.append("attribute inference (× chance)")
    head.append("similarity")
    if labels is not None:
        head += ["task accuracy (private/private)", "task accuracy (clean/private)"]
    head += ["words/s", "meets targets"]
    from textdp.assess.recommend import Targets

    t = a.meta["targets"]
    targets = Targets(**{k: t.get(k) for k in Targets.__dataclass_fields__ if k in t})
    body = []
    for i, r in enumerate(a.rows):
        eps = f"{r['epsilon']:g}" + (" (document)" if r["epsilon_is_document_budget"] else "")
        vector = r.get("form", "words") in ("embeddings", "documents", "baseline")
        ent = ("n/a" if vector else "–" if r.get("entities_found") is None else
               f"{r['entities_survived_count']}/{r['entities_found']}" if r["entities_found"]
               else "0/0")
        line = [r["label"] + (" ★" if i == a.recommendation.get("index") else ""),
                r.get("form", "words"), eps,
                f"{_eps(r.get('document_epsilon_median'))} / {_eps(r.get('document_epsilon_p90'))}"]
        if persons:
            line.append(f"{_eps(r.get('person_epsilon_median'))} / "
                        f"{_eps(r.get('person_epsilon_p90'))}")
        line += [ent, "n/a" if vector else "–" if r.get("independent_survived_count") is None
                 else
                 f"{r['independent_survived_count']} ({_pct(r['documents_leaking'])} of docs)",
                 _pct(r["words_unchanged"]),
                 f"{_pct(r['linkage_top1'])} ({_times(r['linkage_top1'], r['linkage_chance'])})",
                 _pct(r["linkage_top5"])]
        if "author linkage top-1 (× chance)" in head:
            al = r.get("author_linkage_top1")
            line.append("–" if al is None else
                        f"{_pct(al)} ({_times(al, r['author_linkage_chance'])})")
        if "attribute inference (× chance)" in head:
            at = r.get("attribute_accuracy")
            line.append("–" if at is None else
                        f"{_pct(at)} ({_times(at, r['attribute_chance'])})")
        line.append("–" if r.get("similarity") is None else f"{r['similarity']:.3f}")
        if labels is not None:
            line += [_pct(r["task_accuracy"]), _pct(r["task_accuracy_clean_train"])]
        misses = targets.misses(r)
        line += [f"{r['words_per_second']:,.0f}" if r["words_per_second"] else "–",
                 "reference (no private data)" if r.get("reference") else
                 "refused: " + r["refused"] if r.get("refused") else
                 "yes" if not misses else "no: " + "; ".join(misses)]
        body.append(line)
    return head, body


#: The privacy axes the frontier plot offers: row field, axis label, log scale.
PRIVACY_AXES = {
    "linkage": ("linkage_top1", "risk: linkage top-1", False),
    "author-linkage": ("author_linkage_top1", "risk: author linkage top-1", False),
    "document": ("document_epsilon_median", "guarantee: ε of a median whole document (log)",
                 True),
    "person": ("person_epsilon_median", "guarantee: ε of a median person (log)", True),
}


def frontier_png(a: Assessment, privacy: str = "linkage") -> bytes:
    """Privacy against utility (task accuracy with labels, else similarity), one panel per
    mechanism family; points labelled with ε; the recommended setting starred.

    ``privacy``: the x axis, one of :data:`PRIVACY_AXES`: top-1 linkage (the default), author
    linkage, or the whole-document (or per-person) ε of the ledger's guarantee, on a log scale;
    a setting whose guarantee is unbounded has no point there (the panel says how many).
    """
    from matplotlib.figure import Figure

    if privacy not in PRIVACY_AXES:
        raise ValueError(f"privacy axis must be one of {', '.join(PRIVACY_AXES)}, got {privacy!r}")
    x_key, x_label, log = PRIVACY_AXES[privacy]
    families = list(dict.fromkeys(r["label"] for r in a.rows if not r.get("reference")))
    reference = [r for r in a.rows if r.get("reference") and r.get("task_accuracy") is not None]
    cols = min(3, len(families))
    nrows = math.ceil(len(families) / cols)
    fig = Figure(figsize=(4.2 * cols, 3.4 * nrows), layout="constrained")
    axes = fig.subplots(nrows, cols, squeeze=False)
    use_task = a.meta.get("labels") is not None
    key = "task_accuracy" if use_task else "similarity"
    for ax in axes.flat[len(families):]:
        ax.set_visible(False)
    for ax, fam in zip(axes.flat, families, strict=False):
        every = [(i, r) for i, r in enumerate(a.rows) if r["label"] == fam]
        rows = sorted(((i, r) for i, r in every if r.get(x_key) is not None),
                      key=lambda p: p[1]["epsilon"])
        x = [r[x_key] for _, r in rows]
        y = [r[key] for _, r in rows]
        ax.plot(x, y, "o-", color="tab:blue")
        for (i, r), xi, yi in zip(rows, x, y, strict=True):
            ax.annotate(f"ε={r['epsilon']:g}", (xi, yi), textcoords="offset points",
                        xytext=(4, 4), fontsize=7)
            if i == a.recommendation.get("index"):
                ax.plot([xi], [yi], "*", color="tab:red", markersize=16)
        chance_key = {"linkage": "linkage_chance", "author-linkage": "author_linkage_chance"}
        if privacy in chance_key and rows:
            ax.axvline(rows[0][1][chance_key[privacy]], color="grey", linestyle=":",
                       label="chance")
        if use_task:
            labels = a.meta["labels"]
            ax.axhline(labels["accuracy"], color="tab:green", linestyle="--",
                       label="non-private")
            ax.axhline(labels["chance"], color="grey", linestyle="--", label="chance (label)")
            for r in reference:
                ax.axhline(r["task_accuracy"], color="tab:orange", linestyle="-.",
                           label="no private data (label prompts)")
        missing = len(every) - len(rows)
        ax.set_title(fam + (f" ({missing} unbounded/unmeasured, not shown)" if missing else ""),
                     fontsize=10 if not missing else 8)
        ax.set_xlabel(x_label)
        ax.set_ylabel("utility: " + ("task accuracy" if use_task else "similarity"))
        if log:
            if rows:
                ax.set_xscale("log")
        else:
            ax.set_xlim(-0.02, 1.02)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="lower right")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    return buf.getvalue()


def _recommendation_lines(a: Assessment) -> tuple[str, list[str], str | None]:
    rec = a.recommendation
    labels = a.meta.get("labels")
    if rec["met"]:
        r = a.rows[rec["index"]]
        head = (f"Recommended: **{r['label']} at ε = {r['epsilon']:g}"
                + (" (document budget)" if r["epsilon_is_document_budget"] else "")
                + f"**, the most useful of the {rec['meeting']} setting(s) that meet your "
                  f"targets ({rec['targets']}).")
        if r.get("privatize_options"):
            head += (f" Release it with `textdp privatize INPUT -o OUTPUT "
                     f"{r['privatize_options']}` (or `textdp.privatize(texts, **release)` with "
                     "the row's `release` keywords from the JSON report).")
        elif r.get("command"):
            head += f" Release it with `{r['command']}`."
        return head, meanings(r, labels, a.meta), r.get("guarantee_in_words")
    near = [a.rows[n["index"]] for n in rec["nearest"]]
    if not near:
        return (f"**No setting could be assessed** ({rec['targets']}): see the table.", [],
                None)
    head = (f"**No setting meets your targets** ({rec['targets']}). The nearest: "
            + "; ".join(f"{r['label']} at ε = {r['epsilon']:g} ({', '.join(n['misses'])})"
                        for r, n in zip(near, rec["nearest"], strict=True)) + ".")
    return head, meanings(near[0], labels, a.meta), near[0].get("guarantee_in_words")


def _sample_line(a: Assessment) -> str:
    s = a.meta["sample"]
    return (f"Sample: {s['why']}; seed {s['seed']}"
            + ("" if s["seed_given"] else " (drawn at random and recorded: pass it as the seed "
               "to reproduce these figures)")
            + f"; {s['words']:,} words. The sampled documents' positions are in the JSON report.")


def to_markdown(a: Assessment, *, image: str | None = None) -> str:
    """The report in Markdown; ``image`` is the plot's path (default: embedded as a data URI)."""

    head, lines, guarantee = _recommendation_lines(a)
    out = ["# Privacy and utility assessment", "", f"> {HONESTY}", "", _sample_line(a), "",
           "## Recommendation", "", head, ""]
    out += [f"- {line}" for line in lines]
    if guarantee:
        out += ["", "**The formal guarantee in plain words.** " + guarantee]
    if a.meta.get("labels"):
        lab = a.meta["labels"]
        out += ["", f"Labels: {lab['classes']} classes, {lab['train']} documents to train and "
                    f"{lab['test']} to test; accuracy on the originals {_pct(lab['accuracy'])} "
                    f"({_interval(lab['accuracy_interval'])}), chance {_pct(lab['chance'])}."]
    axis = a.meta.get("plot_privacy", "linkage")
    src = image or "data:image/png;base64," + base64.b64encode(frontier_png(a, axis)).decode()
    out += ["", "## What each attack models", ""] + [f"- {x}" for x in attackers(a.meta)]
    out += ["", "## Risk against utility", "", f"![risk against utility per mechanism]({src})",
            "", "## All settings", ""]
    cols, body = _table(a)
    out.append("| " + " | ".join(cols) + " |")
    out.append("|" + "|".join("---" for _ in cols) + "|")
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in body]
    out += ["", "Linkage and task accuracy intervals are 95% Wilson intervals; targets are checked "
                "against the upper end of the linkage interval (the safe side). The settings are "
                "measured on the same sample and seed; entities are those textdp's own "
                "recognisers find in the originals (what they miss is not counted).", ""]
    return "\n".join(out)


_CSS = ("body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;"
        "color:#222}table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;"
        "padding:3px 6px;text-align:right}td:first-child,th:first-child,td:last-child"
        "{text-align:left}.about{background:#fff4e5;border-left:4px solid #f0a020;padding:.6em 1em}"
        "img{max-width:100%}")


def _md_inline(text: str) -> str:
    """``**bold**`` and ```code``` of the report's sentences as HTML (the text escaped)."""
    parts = html.escape(text).split("**")
    text = "".join(f"<b>{p}</b>" if i % 2 else p for i, p in enumerate(parts))
    parts = text.split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def to_html(a: Assessment) -> str:
    """The report as one self-contained HTML page (the plot embedded)."""

    head, lines, guarantee = _recommendation_lines(a)
    png = base64.b64encode(frontier_png(a, a.meta.get("plot_privacy", "linkage"))).decode()
    cols, body = _table(a)
    parts = ["<!doctype html><html><head><meta charset='utf-8'>",
             "<title>textdp assessment</title>", f"<style>{_CSS}</style></head><body>",
             "<h1>Privacy and utility assessment</h1>",
             f"<p class='about'>{html.escape(HONESTY)}</p>",
             f"<p>{_md_inline(_sample_line(a))}</p>", "<h2>Recommendation</h2>",
             f"<p>{_md_inline(head)}</p><ul>"]
    parts += [f"<li>{_md_inline(line)}</li>" for line in lines]
    parts.append("</ul><h2>What each attack models</h2><ul>")
    parts += [f"<li>{_md_inline(x)}</li>" for x in attackers(a.meta)]
    parts.append("</ul>")
    if guarantee:
        parts.append(f"<p><b>The formal guarantee in plain words.</b> {html.escape(guarantee)}</p>")
    parts += ["<h2>Risk against utility</h2>",
              f"<img alt='risk against utility per mechanism' src='data:image/png;base64,{png}'>",
              "<h2>All settings</h2><table><tr>"
              + "".join(f"<th>{html.escape(c)}</th>" for c in cols) + "</tr>"]
    parts += ["<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
              for row in body]
    parts += ["</table><p>Intervals are 95% Wilson intervals; targets are checked against the "
              "upper end of the linkage interval (the safe side). Entities are those textdp's "
              "own recognisers find in the originals.</p></body></html>"]
    return "\n".join(parts) + "\n"
