"""Reports: one document, rendered as Markdown and as self-contained HTML."""

from __future__ import annotations

import base64

from textdp.evaluation.render import Document, fmt

# A 1×1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def test_markdown_and_html(tmp_path):
    img = tmp_path / "figs" / "a.png"
    img.parent.mkdir()
    img.write_bytes(PNG)
    doc = Document("T <1>")
    doc.heading("Section").paragraph("text with `code` and **bold** & <tag>")
    doc.table(["name", "value"], [["a|b", 0.123456], ["c", None], ["d", 12345]])
    doc.image(img, "a figure").pre("x < y").bullets(["one", "two"])
    md = doc.markdown(tmp_path)
    assert md.startswith("# T <1>\n") and "![a figure](figs/a.png)" in md
    assert "| a\\|b | 0.123 |" in md and "| c | – |" in md and "|---|---:|" in md
    page = doc.html()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page
    assert "data:image/png;base64," + base64.b64encode(PNG).decode() in page
    assert "&lt;tag&gt;" in page and "<code>code</code>" in page and "<strong>bold</strong>" in page
    assert 'class="n">12,345<' in page and "x &lt; y" in page


def test_fmt():
    assert fmt(None) == "–" and fmt(float("nan")) == "–" and fmt(True) == "yes"
    assert fmt(1234567.0) == "1.23e+06" and fmt(0.0001234) == "1.23e-04" and fmt(12) == "12"
    assert fmt(2500.4) == "2,500"


def test_rebuild_mechanism_from_a_run_report():
    import textdp
    from textdp.evaluation.render import rebuild_mechanism

    report = textdp.privatize(["The food was great."], mechanism="mvc", epsilon=5, seed=1).report
    mech, why = rebuild_mechanism(report)
    assert why is None and mech.name == "mvc" and mech.epsilon == 5
    report = {**report, "vocabulary": {**report["vocabulary"], "fingerprint": "0" * 64,
                                       "name": "custom"}}
    mech, why = rebuild_mechanism(report)
    assert mech is None and "vocabulary" in why


# ------------------------------------------------------------------------------------------------
# One report schema for word, embedding and document releases, and `textdp report` for all three.


def _three_reports(tmp_path, capsys):
    import json

    import numpy as np

    import textdp
    from textdp.cli import main
    from textdp.encoders import GloveMean, encode_documents
    from textdp.mechanisms.document import build_candidates

    word = textdp.privatize(["The food was great."], mechanism="mvc", epsilon=5, seed=1).report
    vectors, emb_rep = tmp_path / "v.npy", tmp_path / "emb.json"
    np.save(vectors, np.random.default_rng(0).standard_normal((40, 12)))
    assert main(["embed", str(vectors), "-o", str(tmp_path / "w.npy"), "--epsilon", "10",
                 "--delta", "1e-6", "--beta", "0.9", "--report", str(emb_rep)]) == 0
    public = ["The soup was hot. Dinner was good.", "My phone died.", "It rained. It was cold."]
    cands = build_candidates(encode_documents(GloveMean(), public), encoder="glove-mean")
    cands.save(tmp_path / "f.npz")
    docs, doc_rep = tmp_path / "d.txt", tmp_path / "doc.json"
    docs.write_text("The bread was fresh. We ate well.\nThe laptop broke.\n", encoding="utf-8")
    assert main(["docembed", str(docs), "-o", str(tmp_path / "d.npy"), "--epsilon", "4",
                 "--candidates", str(tmp_path / "f.npz"), "--report", str(doc_rep)]) == 0
    capsys.readouterr()
    return word, json.loads(emb_rep.read_text()), json.loads(doc_rep.read_text())


def test_word_embedding_and_document_reports_share_the_top_level_keys(tmp_path, capsys):
    from textdp.privacy.report import REPORT_KEYS, summary_line

    reports = _three_reports(tmp_path, capsys)
    assert [r["kind"] for r in reports] == ["word", "embedding", "document"]
    for r in reports:
        assert set(REPORT_KEYS) <= set(r), r["kind"]
        assert list(r)[:len(REPORT_KEYS)] == list(REPORT_KEYS)
        assert r["schema"] == "textdp.report/1"
        assert set(r["mechanism"]) >= {"name", "parameters"}
        assert r["guarantee"]["epsilon"] > 0 and r["unprotected"]
        assert summary_line(r).startswith(r["mechanism"]["name"] + ": ")
    word, emb, doc = reports
    assert set(emb) - set(REPORT_KEYS) == {"io"} and set(doc) - set(REPORT_KEYS) == {"io"}
    # report/1's word sections stay where their readers look, and are the same objects.
    assert word["tokens"] == word["counts"]["tokens"] and word["policy"] == word["inputs"]["policy"]
    assert "vectors released" in summary_line(emb) and "documents embedded" in summary_line(doc)


def test_textdp_report_renders_embedding_and_document_reports(tmp_path, capsys):
    import json

    from textdp.cli import main

    _, emb, doc = _three_reports(tmp_path, capsys)
    for name, data, expected in (("emb", emb, ["(ε, δ)-Lipschitz privacy", "projection · sha256",
                                               emb["mechanism"]["projection"]["sha256"]]),
                                 ("doc", doc, ["ε-SentDP", "candidates · fingerprint",
                                               doc["inputs"]["candidates"]["fingerprint"]])):
        run = tmp_path / f"{name}.json"
        run.write_text(json.dumps(data), encoding="utf-8")
        assert main(["report", str(run), "--deniability", "5"]) == 0, capsys.readouterr().err
        page = (tmp_path / f"{name}-report" / "report.md").read_text(encoding="utf-8")
        for text in expected:
            assert text in page, (name, text)
        assert "Not measured: plausible deniability is measured for word mechanisms" in page
        assert "<script" not in (tmp_path / f"{name}-report" / "report.html").read_text()
