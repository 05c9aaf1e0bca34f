# Fencepost: `make run` runs a 30 s fault campaign and prints the verdict and report path;
# `make test` runs every test; `make docs` builds the documentation site into build/site.
# All of them call `make setup`, which is idempotent.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.fencepost-installed
STORE  ?= store
RUN_TIME ?= 30

.PHONY: setup system-packages run test lint docs clean

setup: $(STAMP) system-packages

# Debian packages the shipped plugins run (PostgreSQL); installed when missing and we are root, else named.
system-packages:
	@ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "setup: installing postgresql"; \
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends postgresql >/dev/null \
			|| { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			     --no-install-recommends postgresql >/dev/null; } \
			|| echo "setup: could not install postgresql: its plugin's tests skip"; \
		else echo "setup: PostgreSQL is missing (apt-get install -y postgresql): its plugin's tests skip"; fi; }

# The shipped plugins (plugins/*) install as any outside plugin does: editable, each from its own pyproject.
PLUGINS := $(wildcard plugins/*/pyproject.toml)

$(STAMP): pyproject.toml $(PLUGINS)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install -q --disable-pip-version-check --upgrade pip
	@$(BIN)/python -m pip install -q --disable-pip-version-check -e '.[all,dev,docs]' \
		$(foreach p,$(PLUGINS),-e $(dir $(p)))
	@touch $(STAMP)
	@echo "setup: $(VENV) is ready"

run: setup
	@$(BIN)/fencepost test --workload register --nemesis partition,kill,pause,wipe --nodes 3 \
		--time-limit $(RUN_TIME) --store $(STORE)

test: setup
	$(BIN)/python -m pytest --durations=40

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy fencepost harness system nemesis checkers workloads reports plugins/reference/fencepost_reference \
		plugins/etcd/fencepost_etcd plugins/postgresql/fencepost_postgresql \
		plugins/postgresql/fencepost_postgresql_node tests examples/toy_kv
	$(BIN)/lint-imports
	cd examples/toy_kv && ../../$(BIN)/lint-imports

docs: setup
	$(BIN)/mkdocs build --strict -d build/site

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
