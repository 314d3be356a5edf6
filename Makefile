# The two commands of the quick start: `make run` and `make test`. Each sets up what it needs
# (a virtualenv with the Python tools, the Rust extension built by maturin) before it runs.

VENV     := .venv
PY       := $(VENV)/bin/python
BIN      := $(VENV)/bin
DEPS     := $(VENV)/.deps-installed
CONFIG   ?= examples/mqsim-default.toml
# Python sources to lint (folders that exist in this checkout).
PY_DIRS  := $(wildcard python tests benches validation fuzz scripts examples)
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: run test bench fuzz develop lint rust-test py-test fmt clean chromium live-deps docs

run: develop
	$(BIN)/ssdlab run $(CONFIG)

test: lint rust-test py-test

$(PY):
	python3 -m venv $(VENV)

# Every dependency pyproject.toml lists (the package's own and all its extras: plot, dask, dev),
# read from it rather than repeated here; reinstalled when pyproject.toml changes. The package
# itself is built once, by `maturin develop` below.
REQUIREMENTS := $(VENV)/requirements.txt
$(DEPS): pyproject.toml Makefile | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; \
	    reqs = p["dependencies"] + [r for extra in p["optional-dependencies"].values() for r in extra]; \
	    print("\n".join(r for r in reqs if not r.startswith(p["name"] + "[")))' > $(REQUIREMENTS)
	$(PY) -m pip install --quiet -r $(REQUIREMENTS)
	touch $@

# Builds the Rust extension into the virtualenv, profile-guided (scripts/pgo.py: an instrumented
# build trained on the examples, then the build that uses its profile; the profile is kept for
# unchanged sources; SSDLAB_PGO=0 builds without), and the package's bytecode: an editable install
# leaves none, and where PYTHONDONTWRITEBYTECODE is set (as on the CI machine) Python would
# compile every module at every start (10-20 ms of each `ssdlab` command, README's Speed). An
# edited module is compiled again on import.
develop: $(DEPS)
	$(PY) scripts/pgo.py develop
	$(PY) -m compileall -q python/ssdlab

lint: $(DEPS)
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	$(BIN)/ruff check $(PY_DIRS)
	$(BIN)/ruff format --check $(PY_DIRS)

# The C example links libssdlab.a, which `cargo test` does not build (it links tests to the rlib).
rust-test:
	cargo build -p ssdlab-capi --quiet
	cargo test --workspace --quiet

py-test: develop chromium live-deps
	$(BIN)/pytest -q tests

# The report test opens report.html in headless Chromium (Debian's package provides it).
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
chromium:
	command -v chromium >/dev/null || ($(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)

# The live device's tests drive `ssdlab serve` with real NBD clients, fio (ioengine=nbd) and
# qemu-io, and boot a Linux guest on it (QEMU, a static busybox; the kernel package is fetched
# by the test with apt-get download): Debian's fio, qemu-utils, qemu-system-x86, busybox-static.
live-deps:
	command -v fio >/dev/null && command -v qemu-io >/dev/null && command -v qemu-system-x86_64 >/dev/null && test -x /bin/busybox || ($(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends fio qemu-utils qemu-system-x86 busybox-static)

# Regenerates docs/configuration.md from the config schema and the tables of figures in the
# docs from the code (ssdlab.doc_tables); tests/test_docs.py checks both.
docs: develop
	$(PY) -m ssdlab.docs
	$(PY) -m ssdlab.doc_tables

# The long fuzz campaign (docs/reliability.md): FUZZ_RUNS inputs of each kind (data-verified
# feature combinations, hostile configs, damaged traces), each in its own process with limits;
# reproducers of every defect go to $(FUZZ_OUT)/repro. Then the Rust and Hypothesis properties
# with a budget 20-30x the one `make test` runs, on fresh seeds.
FUZZ_RUNS ?= 2000
FUZZ_KIND ?= all
FUZZ_OUT  ?= fuzz-out
FUZZ_JOBS ?= $(shell nproc)
fuzz: develop
	$(PY) fuzz/campaign.py --kind $(FUZZ_KIND) --runs $(FUZZ_RUNS) --jobs $(FUZZ_JOBS) --out $(FUZZ_OUT) --progress 500
	SSDLAB_FUZZ_CASES=5000 SSDLAB_PROPTEST_SEED=$$(date +%s) cargo test --release -p ssdlab-core --test fuzz_inputs --quiet
	SSDLAB_FUZZ_EXAMPLES=20 HYPOTHESIS_PROFILE=long $(BIN)/pytest -q tests/test_fuzz.py

# The throughput benchmark is profile-guided as the extension is (scripts/pgo.py bench).
bench: develop live-deps
	$(PY) scripts/pgo.py bench
	$(PY) scripts/bench_live.py --out bench-live.json
	$(PY) scripts/bench_sweep.py --out results/bench-sweep.json
	$(PY) scripts/bench_cli.py --out results/bench-cli.json

fmt: $(DEPS)
	cargo fmt --all
	$(BIN)/ruff format $(PY_DIRS)

clean:
	rm -rf $(VENV) target results $(FUZZ_OUT) .hypothesis
