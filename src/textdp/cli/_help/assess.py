"""``textdp assess --help``: its long help text (see :mod:`textdp.cli._help`)."""

HELP = """Measure, on a sample of INPUT, what each mechanism and ε leaks and what it keeps,
and recommend the best setting that meets your targets. Nothing is released.

\b
Release forms (--forms): words (mvc, diffractor, custext, tem at six ε each, and MVC
with stop words kept and with a document budget), embeddings (PrivEmb on the MiniLM
sentence embeddings, ε 10-1000) and documents (DeepCandidate, ε 1-30 per sentence,
with --candidates); baseline (with --label-field: a reference row, the language model
writing from the label names alone, ε = 0, its classifier tested on held-out originals);
prompt (DP-Prompt paraphrases with the language model of --model: text, measured as the
word mechanisms; slow, give --sample); synthetic (with --label-field: textdp synthesize on
the training part of the split, its classifier tested on the held-out originals; slow).
Vector forms release no text: leakage does not apply to them; their linkage attack is a
nearest neighbour between released and original vectors, their classifier logistic
regression on the vectors.

\b
Per setting:
  leakage      names, places, organisations, addresses and identifiers of the
               originals (textdp's own recognisers) surviving verbatim; words unchanged
  linkage      an attacker holding the originals links private documents back
               (TF-IDF and MiniLM nearest neighbour, top-1 and top-5, against chance)
  author       with --unit-field (the person of each document): an attacker holding
  linkage      each person's other documents names the author (TF-IDF, character n-gram
               and MiniLM nearest neighbour, top-1 and top-5, against chance)
  attribute    with --sensitive-field: an attacker who knows the field for some people
               infers it for the others from the private text (against the majority guess)
  guarantee    the ε (δ) a whole document of your data's median and 90th-percentile
               length gets, by the ledger's own code; with --unit-field, per person
  utility      MiniLM similarity with the original; with --label-field, the accuracy of
               a TF-IDF + logistic-regression classifier (train private / test private,
               train clean / test private) against the originals and chance
  cost         words per second

The report is computed on your private data and is NOT private: it is for the data
owner only. No private text is written and no ledger budget is spent.

\b
Writes (-o DIR): DIR/report.json, report.md, report.html (self-contained) and
frontier.png; or only the files named by --json, --markdown, --html; or, with none of
these, the Markdown report on standard output.

\b
Example:
  textdp assess tickets.jsonl --text-field text --label-field issue -o assessment
  textdp assess tickets.jsonl --unit-field customer --max-author-linkage 5x -o assessment
  textdp privatize tickets.jsonl --text-field text -o private.jsonl -m mvc --epsilon 4
"""
