# The two commands README starts with: `make up` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: up test install browser

$(BIN)/memoria: pyproject.toml
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
