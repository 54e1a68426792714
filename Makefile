# The two commands README starts with: `make up` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: up test install browser

# Every dependency, the local embedder's model package (packages/memoria-use-onnx) included, is
# declared in pyproject.toml and setup.py: a plain `pip install .` gets the same install.
$(BIN)/memoria: pyproject.toml setup.py packages/memoria-use-onnx/pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(BIN)/memoria

install: $(BIN)/memoria

up: install
	$(BIN)/memoria up

browser:
	@scripts/ensure-chromium

test: install browser
	$(BIN)/python -m pytest $(PYTEST_ARGS)
