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
    report["vocabulary"] = {**report["vocabulary"], "fingerprint": "0" * 64, "name": "custom"}
    mech, why = rebuild_mechanism(report)
    assert mech is None and "vocabulary" in why
