# quotagov: every target does its own set-up (a virtualenv in .venv).
PY ?= python3
export SAM_CLI_TELEMETRY := 0
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
SAM_VENV := .sam-venv
SAM_STAMP := $(SAM_VENV)/.installed-stamp
SAM_CLI_VERSION ?= 1.170.0
# The port of `make serve` (on 127.0.0.1): `make serve PORT=3001`.
PORT ?= 3000
# The port of `make docs-serve` (on 127.0.0.1): `make docs-serve DOCS_PORT=8001`.
DOCS_PORT ?= 8000

.PHONY: install lint typecheck test unit unit-fast demo serve lint-template docs docs-serve clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

install: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check src tools tests benchmarks
	$(BIN)/ruff format --check src tools tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest -q -n 2

# The quick tier for the edit-test loop: leaves out the tests marked slow (subprocesses,
# loopback servers, long hypothesis runs; see tests/conftest.py). CI runs `unit`.
unit-fast: $(STAMP)
	$(BIN)/pytest -q -n 2 -m "not slow"

# The README's test command: lint, type-check, the SAM template checks, the docs site
# (strict: a broken link or anchor fails it), then the suite.
test: lint typecheck lint-template docs unit

demo: $(STAMP)
	$(BIN)/quotagov demo

serve: $(STAMP)
	$(BIN)/quotagov serve --port $(PORT)

# The documentation site (mkdocs.yml, docs/) into site/. --strict turns every warning,
# a link or anchor that leads nowhere included, into a failure.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# The same site with live reload, on loopback only.
docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs serve --dev-addr 127.0.0.1:$(DOCS_PORT)

# aws-sam-cli lives in its own virtualenv so its pins never clash with the project's.
$(SAM_STAMP):
	$(PY) -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/pip install -q --upgrade pip
	$(SAM_VENV)/bin/pip install -q 'aws-sam-cli==$(SAM_CLI_VERSION)'
	touch $@

# sam validate --lint fails on any cfn-lint error or warning. sam build (cached, see
# samconfig.toml) needs a python3.11 on PATH for the functions' runtime: the project's
# venv provides it; the layer's arm64 wheels come from PyPI. tests/deploy then walks the
# built template (.aws-sam/build/template.yaml).
lint-template: $(STAMP) $(SAM_STAMP)
	$(SAM_VENV)/bin/sam validate --lint
	PATH="$(CURDIR)/$(BIN):$$PATH" $(SAM_VENV)/bin/sam build
	$(BIN)/python -m quotagov_tools.deploy.package .aws-sam/build

clean:
	rm -rf $(VENV) $(SAM_VENV) .aws-sam .pytest_cache .mypy_cache .ruff_cache site
