# `make demo` and `make test` work on a fresh machine: they create .venv first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.gradfix-installed

.PHONY: demo test bench venv clean

venv: $(STAMP)

# torch==2.13.0 first: it is a CPU wheel on this machine's disk; a bare `torch`
# requirement would pull a multi-GB CUDA build.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[verify,lsp,dev]'
	touch $(STAMP)

# The demo installs quietly (the log is kept in build/venv.log) and shows only gradfix's output.
DEMO_GRADFIX ?= $(CURDIR)/$(VENV)/bin/gradfix
DEMO_DIR ?= build/demo
demo:
	@mkdir -p build
	@if [ ! -f $(STAMP) ] || [ pyproject.toml -nt $(STAMP) ]; then \
	  echo "Setting up .venv (torch CPU wheel, then gradfix; log: build/venv.log)..."; \
	  $(MAKE) --no-print-directory venv > build/venv.log 2>&1 || { tail -n 20 build/venv.log; exit 1; }; \
	fi
	@bash examples/demo.sh "$(DEMO_GRADFIX)" "$(DEMO_DIR)"

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) bench/bench_verify.py

clean:
	rm -rf $(VENV) build *.egg-info
