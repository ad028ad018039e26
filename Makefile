# Two commands do everything on a fresh machine (Python 3.10+, a C compiler, internet access to PyPI):
#   make demo   - set up, then run the demo session on the embedded offline LLM
#   make test   - set up, lint (ruff) and type-check (mypy), then run the whole test suite (live-model tests included)
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# Wheels of every dependency of the install test's extras (tests/test_install.py), so that test installs offline.
WHEELHOUSE  ?= .wheelhouse
TOUR_EXTRAS := chat,serve,train,docs
# llama.cpp's default native build crashes on some CPUs (AMX); a portable build is safe everywhere.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF
# pip caches the built llama-cpp-python wheel, so only the first setup on a machine compiles it (~15 min on 2 cores).

.PHONY: setup demo lint test clean chromium wheelhouse

setup: $(VENV)/.installed chromium

$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[all,dev,docs]"
	touch $@

# The wheels the install test installs from with --no-index (pip fetches them here, where setup may use the
# network; the test then needs none). The build requirements are included: the test builds augmenter's wheel offline.
wheelhouse: $(WHEELHOUSE)/.built

$(WHEELHOUSE)/.built: pyproject.toml $(VENV)/.installed
	rm -rf $(WHEELHOUSE)
	$(BIN)/python -m pip wheel --quiet -w $(WHEELHOUSE) ".[$(TOUR_EXTRAS)]" "setuptools>=77" wheel
	rm -f $(WHEELHOUSE)/augmenter-*.whl
	echo "$(TOUR_EXTRAS)" > $@

# The web chat's browser test drives Debian's chromium (Playwright's own browser download is not used): installed
# with apt-get when it is missing and apt-get is there (as root, or through sudo without a password).
chromium:
	@command -v chromium >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo "sudo -n" ); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q chromium \
	  || echo "chromium could not be installed: the browser test will be skipped"; }

demo: setup
	$(BIN)/augmenter chat --demo --trace

# ruff and mypy read their settings from pyproject.toml ([tool.ruff], [tool.mypy]: the public API's modules).
lint: setup
	$(BIN)/python -m ruff check .
	$(BIN)/python -m ruff format --check .
	$(BIN)/python -m mypy

test: setup wheelhouse lint
	$(BIN)/python -m pytest -q

clean:
	rm -rf $(VENV) $(WHEELHOUSE) *.egg-info
