# Two commands: `make run` (serve on the embedded default) and `make test`.
HOST ?= 127.0.0.1
PORT ?= 8000
VENV := .venv
PY := $(VENV)/bin/python

# A Python 3.12 or newer: $(PYTHON) if given, else the first suitable one on PATH or under pyenv.
PYTHON ?= $(shell for p in python3.14 python3.13 python3.12 python3 $$HOME/.pyenv/versions/3.1[2-9]*/bin/python3; do \
	if command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)' >/dev/null 2>&1; then \
	command -v $$p; break; fi; done)

.PHONY: run test worker beat bench lint fuzz clean

$(VENV)/.installed: requirements.txt requirements-dev.txt
	@if [ -z "$(PYTHON)" ]; then echo "Python 3.12 or newer is needed (Django 6). Install it, or run: make PYTHON=/path/to/python3.12"; exit 1; fi
	@if [ ! -x $(PY) ] || ! $(PY) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else 1)'; then rm -rf $(VENV); $(PYTHON) -m venv $(VENV); fi
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements-dev.txt
	$(PY) -m guardrails.engine.encoder
	@touch $@

run: $(VENV)/.installed
	$(PY) manage.py migrate --noinput
	$(PY) manage.py seed
	$(VENV)/bin/uvicorn config.asgi:application --host $(HOST) --port $(PORT)

test: $(VENV)/.installed
	$(PY) manage.py check --fail-level WARNING
	$(PY) manage.py makemigrations --check --dry-run
	$(PY) manage.py spectacular --validate --fail-on-warn --file /dev/null
	$(PY) -m pytest $(PYTEST_ARGS)

worker: $(VENV)/.installed
	$(VENV)/bin/celery -A config worker -l info

beat: $(VENV)/.installed
	$(VENV)/bin/celery -A config beat -l info

bench: $(VENV)/.installed
	$(PY) bench/run.py

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

clean:
	rm -rf $(VENV) staticfiles .pytest_cache
