"""``textdp privatize --help``: its long help text (see :mod:`textdp.cli._help`)."""

HELP = """Privatise every document of INPUT and write them to OUTPUT.

\b
INPUT formats, by extension (OUTPUT must have the same one):
  .txt      one document per line; every line, empty ones included, gives one line out,
            with its own line ending
  .jsonl    one JSON object per line; the document is the string field --text-field
            (a dotted path such as meta.text reaches into nested objects); every other
            byte of the line (fields, numbers as written, escapes) is copied unchanged
  .csv      header row; the document is the column --text-field; other columns pass
  .tsv      through; quoted fields may span lines; --delimiter sets the separator
  .parquet  the document is the string column --text-field; other columns pass through
  + .gz or .zst (reviews.jsonl.gz): compressed; '-': standard input/output (--format)
Repeat --text-field to privatise several fields of each record, each as its own document.
With --engine ray, INPUT may also be a directory, a quoted glob pattern ('data/*.jsonl'),
several files, or a URI (s3://bucket/prefix/, gs://..., file://...; credentials from the
environment); OUTPUT is then a directory (or prefix) with one file per input, of the same name.

N records in give N records out, in order. The file is read in batches of --batch-size
documents (memory stays bounded), with a progress bar when stderr is a terminal. OUTPUT
(and the report) appear only when everything succeeded: they are written to a temporary
file and renamed at the end, so an error leaves no partial output.

\b
Token policy: words in the vocabulary are privatised by the mechanism; whitespace and
punctuation are kept. Out-of-vocabulary words and numbers follow --oov:
  mask    replace by --mask-token (default [MASK])
  keep    release unchanged: UNPROTECTED (counted in the report, and warned)
  drop    remove the token
  random  a uniformly random vocabulary word, independent of the input

\b
Identifiers (on by default; --no-identifiers turns them off) are found before
tokenisation and handled as one token each: e-mail addresses, URLs, IPv4/IPv6
addresses, IBANs (checksum), card numbers (Luhn), phone numbers (libphonenumber:
international, or national in --phone-regions), bare domains (Public Suffix List),
--identifier-pattern kinds and --deny-list terms; each document on its own.
mask and random replace one by its label ([EMAIL], [URL], [IP],
[IBAN], [CARD], [PHONE], [NAME]; --identifier-label KIND=LABEL), keep releases it
(UNPROTECTED, counted), drop removes it. Deny-list terms are always masked ([REDACTED]).

\b
Entities (on by default; --entities none turns them off) are found next, offline (spaCy
en_core_web_sm 3.8.0 on the windows around capitalised words; patterns for street
addresses) and replaced by [PERSON], [LOCATION], [ORG] or [ADDRESS] (removed under
--oov drop). Word-level DP protects the choice of words, not who a text names: without
this stage names often come back unchanged. --allow-list terms are kept as they are.

\b
The report (--report PATH, JSON; schema in README.md) states the mechanism and its
parameters, the guarantee per word and its composition over a document, token counts by
class and by policy, the expected fraction of privatised words returned unchanged
("deniability", with the method and a 95% interval; warned above --unchanged-warning), what
was released unprotected, warnings, the randomness (seeded or not), the vocabulary
fingerprint, textdp version, timing, and an "io" entry (input, output, format, records in
and out). Without --report a one-line summary goes to stderr.

Errors (bad parameters, a malformed record) print one line, naming file and line, and exit
with status 2; parameters are checked before any input is read. --on-error skip leaves a
malformed record out instead (counted and listed by line in the report's "io" entry), and
--null pass lets a null text field pass through as null. Interrupted (Ctrl-C, SIGTERM): exit
130, no output and no temporary file left.

\b
DP-Prompt (--mechanism dp_prompt, extra 'lm'): a local language model paraphrases each
whole document, every token sampled from its clipped, temperature-scaled logits: pure
ε-DP per document for any two documents (docs/dp_prompt.md). Give one of --epsilon (per
document), --epsilon-per-token or --temperature; --batch-size is then the documents per
generation batch (16 unless given). The token options above do not apply.

\b
Example:
  textdp privatize reviews.txt -o reviews.private.txt --mechanism mvc --epsilon 10
  textdp privatize reviews.txt -o out.txt --mechanism dp_prompt --epsilon 2000 --max-new-tokens 48
"""
