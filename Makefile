# The README's two commands are `make run` and `make test`; everything they need is installed here.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
NPM_STAMP := frontend/node_modules/.installed
EDITOR := frontend/dist/index.html
WIDGET := wiregrad/static/widget.js
FRONTEND_SRC := $(shell find frontend/src -type f 2>/dev/null) frontend/index.html frontend/vite.config.ts frontend/vite.widget.config.ts

.PHONY: chromium redis widget run test lint test-python test-frontend test-e2e bench clean

$(STAMP): pyproject.toml setup.py backend/graph/_tables.c backend/graph/_observe.c \
		engine/_random_fill.c engine/_random_fill_kernel.h
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

$(NPM_STAMP): frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund --loglevel=error
	touch $(NPM_STAMP)

# the built editor, which `wiregrad serve` serves (not committed)
$(EDITOR): $(NPM_STAMP) $(FRONTEND_SRC)
	cd frontend && npm run --silent build -- --logLevel warn

# the editor as a notebook widget (wiregrad.show): one ES module inside the Python package
$(WIDGET): $(NPM_STAMP) $(FRONTEND_SRC)
	cd frontend && npm run --silent build:widget -- --logLevel warn

widget: $(WIDGET)

chromium:
	./scripts/install-chromium.sh

# Debian's redis-server, for the scale-out tests (they start their own on a free port)
redis:
	./scripts/install-redis.sh

run: $(STAMP) $(EDITOR)
	$(VENV)/bin/wiregrad serve $(ARGS)

lint: $(STAMP) $(NPM_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	cd frontend && npx tsc --noEmit -p .

test-frontend: $(NPM_STAMP)
	cd frontend && npx vitest run

test-python: $(STAMP) $(WIDGET) redis
	$(PY) -m pytest -n 2 tests

test-e2e: $(STAMP) $(EDITOR) $(WIDGET) chromium
	$(PY) -m pytest -n 2 e2e

test: lint test-frontend $(EDITOR) $(WIDGET) chromium redis
	$(PY) -m pytest -n 2 tests e2e

# Benchmarks print tables (never assert timings); BLAS tuning variables are unset for fairness.
bench: $(STAMP) $(EDITOR) chromium
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) bench/engine.py
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) bench/graph.py
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(PY) bench/server.py
	$(PY) bench/editor.py

clean:
	rm -rf $(VENV) build *.egg-info frontend/dist wiregrad/static frontend/node_modules backend/graph/*.so engine/*.so
