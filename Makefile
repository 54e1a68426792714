# The two commands README starts with: `make up` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: up test install browser screenshots translations

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

# The README's console pictures (docs/screenshots, 1366 px and phone-*.png at 390 px), from the browser matrix,
# and of the language switch (language-es-*.png).
screenshots: install browser
	MEMORIA_SCREENSHOTS=1 $(BIN)/python -m pytest tests/test_console_matrix.py tests/test_language_browser.py \
		-k "screenshots or switch_turns_every_page" -p no:logging $(PYTEST_ARGS)

# The console's translations: re-extract the strings, merge them into each catalog, compile the .mo files
# (committed, so that a fresh clone needs no build step). Translate the new msgids in the .po, then run again.
translations: install
	$(BIN)/pybabel extract -F babel.cfg -k _l --no-location --sort-output -o translations/messages.pot .
	$(BIN)/pybabel update -i translations/messages.pot -d translations --no-fuzzy-matching
	$(BIN)/pybabel compile -d translations --statistics
