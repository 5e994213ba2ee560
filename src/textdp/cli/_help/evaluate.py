"""``textdp evaluate --help``: its long help text (see :mod:`textdp.cli._help`)."""

HELP = """Evaluate word mechanisms at several ε and write a report to --out.

\b
For each mechanism and ε (sizes in brackets are the options that set them):
  plausible deniability  N_w and S_w over [--words] vocabulary words, [--draws] draws
                         each (exact for mechanisms with an exact output law)
  utility                logistic regression on [--features] sentence features, trained
                         on private / tested on clean and the reverse: binary VADER
                         sentiment and fortunes topics [--docs documents each];
                         SBERT cosine similarity original vs private [--similarity-docs]
  empirical privacy      an adversary trained on clean text applied to private text:
                         source attribution (tweet / movie / Amazon / NYT) and author
                         attribution of fortunes quotes; re-identification rate
  efficiency             words/s and peak memory per 1,000 words (fresh process each)

\b
With INPUT (JSONL, CSV/TSV, Parquet or text; --text-field names the field or column), the
measurements run on your data instead of the built-in sets, each release built as
`textdp privatize` would build it (entity and identifier stage on; --entities):
  plausible deniability  N_w and S_w on the data's privatised words, weighted by their
                         counts (at most [--words]; out-of-vocabulary words, numbers,
                         identifiers and entities are counted apart)
  utility                with --label-field L: logistic regression predicting L, train
                         private / test clean and train clean / test private (the MVC
                         paper's two protocols) and both private, against the clean
                         baseline and chance; SBERT similarity original vs private
  re-identification      how often a private document's nearest original is its own
  efficiency             words/s of each release on your documents, and the fresh-process
                         measurement above
At most [--docs] documents are used (drawn uniformly; stated in the report). --tasks picks
from: label, reidentification, similarity.

\b
--out DIR receives results.json (everything measured, with the configuration),
report.md and report.html (self-contained: the PNGs are embedded) and the PNG figures.
No private text is written unless --include-text (with INPUT: no document of it, but
the single words N_w and S_w are measured on are listed; the report is for the data
owner). The fortunes tasks need the Debian package 'fortunes' (fetched with apt-get
into the cache on first use); without it they are skipped with a note. --tasks picks
a subset: sentiment, topic, source, author, reidentification, similarity.

\b
Mechanism parameters: --param MECHANISM:NAME=VALUE (repeatable), e.g.
  --param diffractor:method=tem

\b
Example:
  textdp evaluate --mechanisms mvc,diffractor --epsilons 1,5,10 --out eval/
  textdp evaluate tickets.jsonl --text-field body --label-field issue -m mvc -e 4,8,16 -o eval/
"""
