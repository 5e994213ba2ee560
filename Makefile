# The two commands a new user needs: `make demo` and `make test` (see README.md).
PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
# torch (the sbert and lm extras): pin the CPU build so pip never pulls CUDA.
TORCH  := torch==2.13.0

.PHONY: demo test docs-check lint bench experiments chromium clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Every extra a README command uses (Ray, pandas, datasets, the local LM, faiss, SBERT), so that
# each command the README shows runs after `make demo`.
$(VENV)/.textdp-base: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet "$(TORCH)"
	$(BIN)/python -m pip install --quiet -e ".[all]"
	touch $@

$(VENV)/.textdp-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet "$(TORCH)"
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@ $(VENV)/.textdp-base

demo: $(VENV)/.textdp-base
	@mkdir -p demo-output
	$(BIN)/textdp privatize examples/reviews.txt -o demo-output/reviews.private.txt \
		--mechanism mvc --epsilon 8 --report demo-output/report.json
	@echo
	@echo "private text: demo-output/reviews.private.txt"
	@echo "report:       demo-output/report.json"

# Headless Chromium opens the evaluation's HTML report in a test; install it when we can (root +
# apt), otherwise that one test is skipped.
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; } || \
	  echo "note: chromium not available; the HTML report test will be skipped"

# Two pytest-xdist workers (the 2 cores); each module, and the Ray tests together, run on one
# worker (tests/conftest.py). `make test TEST_WORKERS=0` runs the suite in this process alone.
TEST_WORKERS ?= 2

test: $(VENV)/.textdp-dev chromium
	$(BIN)/ruff check src tests benchmarks experiments
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadscope

# Every code block of README.md, docs/ and examples/, the long ones too (model loading, Ray,
# evaluation: those `make test` leaves out; see tests/docs/_harness.py for the marks).
docs-check: $(VENV)/.textdp-dev
	TEXTDP_DOCS_LONG=1 $(BIN)/python -m pytest -q tests/docs

lint: $(VENV)/.textdp-dev
	$(BIN)/ruff check src tests benchmarks experiments

bench: $(VENV)/.textdp-dev
	$(BIN)/python -m benchmarks.run

# The papers' experiments (long: 3.5-4 hours in all on a shared 2-core machine; each page's header
# gives its own time). Each page and its results.json live under docs/results/; `python -m
# experiments.NAME --from-results docs/results/NAME/results.json --out PAGE` redraws a page
# without running anything.
# They live in experiments/ at the repository's root, not in the installed package.
experiments: $(VENV)/.textdp-dev
	$(BIN)/python -m experiments.privemb
	$(BIN)/python -m experiments.deepcandidate
	$(BIN)/python -m experiments.word_mechanisms
	$(BIN)/python -m experiments.mvc300
	$(BIN)/python -m experiments.diffractor
	$(BIN)/python -m experiments.privemb300
	$(BIN)/python -m experiments.deepcandidate300
	$(BIN)/python -m experiments.beyond_words
	$(BIN)/python -m experiments.mvc_utility
	$(BIN)/python -m experiments.baselines300
	$(BIN)/python -m experiments.provenance
	$(BIN)/python -m experiments.mvc_worstcase
	$(BIN)/python -m experiments.differences

clean:
	rm -rf $(VENV) demo-output .pytest_cache .ruff_cache
