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

demo: $(STAMP)
	@rm -rf build/demo && mkdir -p build/demo && cp examples/*.py examples/pyproject.toml golden/seeds/seed1_scenario.py golden/seeds/seed2_loop.py build/demo/
	@echo "== gradfix check examples/ =="
	-@cd build/demo && ../../$(VENV)/bin/gradfix check .
	@echo
	@echo "== gradfix apply --diff (each change verified by a gradient-equivalence test) =="
	-@cd build/demo && ../../$(VENV)/bin/gradfix apply --diff .

test: $(STAMP)
	$(PY) -m pytest -q

bench: $(STAMP)
	$(PY) bench/bench_verify.py

clean:
	rm -rf $(VENV) build *.egg-info
