# ccbench: every set-up step lives here. `make demo` and `make test` work on a fresh machine
# with Python 3.10+, a Rust toolchain (cargo) and network access to PyPI and crates.io.

VENV    := $(CURDIR)/.venv
PY      := $(VENV)/bin/python
STAMPS  := $(CURDIR)/.stamps
export VIRTUAL_ENV := $(VENV)
export PATH := $(VENV)/bin:$(PATH)

.PHONY: demo test build wheel setup rust-test py-test browser tshark bpf ns3 bench campaigns studies studies-reduced clean-results

demo: build
	$(PY) -m ccbench run examples/quickstart.yaml -o results/quickstart

test: build rust-test py-test

setup: $(STAMPS)/deps

$(STAMPS)/deps: requirements.txt
	@command -v cargo >/dev/null || { echo "cargo not found: install Rust (https://rustup.rs) first"; exit 1; }
	@test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt
	@mkdir -p $(STAMPS) && touch $@

# Builds the Rust core into the venv (incremental: a no-op when nothing changed).
build: setup
	@echo "building the simulator core into the venv (maturin develop --release)"
	@mkdir -p $(STAMPS) && PIP_QUIET=1 PIP_DISABLE_PIP_VERSION_CHECK=1 $(VENV)/bin/maturin develop \
	  --release --quiet > $(STAMPS)/maturin.log 2>&1 || { cat $(STAMPS)/maturin.log; exit 1; }
	cargo build --release --quiet -p ccbench-emu -p ccbench-pcap

# A wheel for `pip install` into any venv (Python >= 3.10): the simulator core, and the kernel
# backend's three binaries inside the package (ccbench/bin). Written to dist/.
wheel: setup
	cargo build --release --quiet -p ccbench-emu
	mkdir -p python/ccbench/bin
	cp target/release/ccbench-emu target/release/ccbench-agent target/release/ccbench-dgram python/ccbench/bin/
	$(VENV)/bin/maturin build --release --quiet -o dist; status=$$?; \
	  rm -rf python/ccbench/bin; exit $$status

rust-test:
	cargo test --release --workspace --exclude ccbench-py

# The tests that do not touch the kernel backend run on every core (whole files to a worker, so
# a module's shared fixture runs once); then the kernel-backend tests alone, as their real-time
# runs need the machine to themselves (tests/conftest.py marks them; docs/testing.md).
PYTEST_JOBS ?= auto
py-test: browser tshark bpf
	$(PY) -m pytest -q -m "not kernel" -n $(PYTEST_JOBS) --dist loadfile
	$(PY) -m pytest -q -m kernel

# apt-get install of the packages $(1), as root or through `sudo -n`; when the first try fails
# (a fresh image has no package lists yet) the lists are refreshed once and it tries again.
# Quiet and allowed to fail: each caller then says which tests will be skipped.
apt_install = command -v apt-get >/dev/null 2>&1 && { \
	  asroot() { if [ "$$(id -u)" = 0 ]; then env DEBIAN_FRONTEND=noninteractive "$$@"; \
	             else sudo -n env DEBIAN_FRONTEND=noninteractive "$$@"; fi; }; \
	  asroot apt-get install -y $(1) >/dev/null 2>&1 || \
	  { asroot apt-get update >/dev/null 2>&1 && asroot apt-get install -y $(1) >/dev/null 2>&1; }; }

# Headless Chromium for the report tests (tests/test_report_browser.py); they skip without it.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  ($(call apt_install,chromium)) || \
	  echo "note: no Chromium and no way to install it; the browser tests will be skipped"

# tshark checks the pcapng captures (tests/test_capture_*.py); they skip without it.
tshark:
	@command -v tshark >/dev/null 2>&1 || ($(call apt_install,tshark)) || \
	  echo "note: no tshark and no way to install it; the capture cross-checks will be skipped"

# Debian's ns-3 and the benchmark's dumbbell program built against it (benches/ns3/build.sh),
# for the ns-3 half of `make bench`; without them benches/run.py times ccbench alone.
ns3:
	@test -x benches/build/ns3-dumbbell || \
	  { { pkg-config --exists ns3-core 2>/dev/null || ($(call apt_install,libns3-dev g++ pkg-config)); } && \
	    sh benches/ns3/build.sh >/dev/null; } || \
	  echo "note: no ns-3 and no way to install it; make bench will time ccbench alone"

# clang, libbpf headers and bpftool build and register BPF schemes (docs/bpf-schemes.md,
# tests/test_emu_bpf.py); without them those tests skip.
bpf:
	@(command -v clang >/dev/null 2>&1 && command -v bpftool >/dev/null 2>&1 && test -f /usr/include/bpf/bpf_helpers.h) || \
	  ($(call apt_install,clang llvm libbpf-dev bpftool)) || \
	  echo "note: no clang/libbpf/bpftool and no way to install them; the BPF scheme tests will be skipped"

# Speed against ns-3 (benches/run.py), then the regression guard: the headline figures of this
# commit appended to benches/history/bench.jsonl (benches/history.py, docs/benchmarks.md).
bench: build ns3
	cargo build --release --quiet -p ccbench-sim --bin ccsim
	$(PY) benches/run.py
	$(PY) benches/history.py

# The example campaigns (examples/campaigns/): run, aggregate, plot into results/campaigns/.
campaigns: build
	$(PY) -m ccbench sweep examples/campaigns/bbr-vs-cubic-queue.yaml -o results/campaigns/bbr-vs-cubic
	$(PY) -m ccbench aggregate results/campaigns/bbr-vs-cubic --metric avg_tput_mbps,p95_delay_ms --plot
	$(PY) -m ccbench sweep examples/campaigns/loss-grid.yaml -o results/campaigns/loss-grid
	$(PY) -m ccbench aggregate results/campaigns/loss-grid --level 0.9 --metric avg_tput_mbps --plot

# The source studies (examples/studies/, docs/studies.md): every campaign, RESULTS.md and figures
# into results/study-<name>/. SCALE=full (hours on two cores), medium (minutes) or reduced (CI).
SCALE ?= medium
studies: build
	$(PY) -m ccbench study all --scale $(SCALE) -o results

studies-reduced: build
	$(PY) -m ccbench study all --reduced -o results/reduced

clean-results:
	rm -rf results
