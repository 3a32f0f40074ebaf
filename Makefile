# nsyscheck — build, test, and (on a GPU machine) capture.
GO      ?= go
BIN     ?= bin
NVCC    ?= nvcc
NSYS    ?= nsys
# GPU architecture for `make kernel`: the GPU present, as nvidia-smi reports it.
ARCH    ?= sm_$(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)
# Where `make capture` writes; it refuses to overwrite an existing folder.
CAPTURE ?= /tmp/nsyscheck-capture
REPORTS := cuda_api_sum,cuda_api_trace,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum,nvtx_sum,cuda_gpu_trace,nvtx_pushpop_trace
CAPTURES := $(sort $(dir $(wildcard testdata/captures/*/expect.json)))
AUDITS  := $(sort $(dir $(wildcard testdata/captures/*/audit-expect.json)))
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo devel)
BENCH_DIR ?= /tmp/nsyscheck-bench
# make bench's captures: API rows added to the h200-pinned export, copies of
# the many-copies captures generated in the real 600,000-copy capture's
# shape, and real exports of many copies to measure beside them
# (comma-separated; e.g. BIG_CAPTURES=/data/many-copies-600k.sqlite).
BENCH_SIZES  ?= 1000000,10000000
BENCH_COPIES ?= 600000
BIG_CAPTURES ?=
# How many shipped captures check-captures checks at once: the CPUs there are.
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
# Where `make install` puts nsyscheck: $(PREFIX)/bin.
PREFIX  ?= /usr/local

.PHONY: all build install kernel test check-captures vet fmt-check capture bench fuzz clean

all: build

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN)/nsyscheck ./cmd/nsyscheck

# Put nsyscheck on PATH: $(PREFIX)/bin/nsyscheck (PREFIX=$$HOME/.local for
# ~/.local/bin, without root).
install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN)/nsyscheck $(DESTDIR)$(PREFIX)/bin/nsyscheck

kernel:
	@test "$(ARCH)" != "sm_" || { echo "make kernel: no GPU found by nvidia-smi; pass ARCH=sm_XX" >&2; exit 2; }
	mkdir -p $(BIN)
	$(NVCC) -std=c++17 -O3 -lineinfo -arch=$(ARCH) -o $(BIN)/pinned kernels/pinned.cu

# The whole test suite: formatting, vet, unit/golden/CLI tests with the fuzz
# seed corpora, and `nsyscheck verify --expect` (and `audit --expect` where a
# capture has audit-expect.json) on every shipped capture through the built
# binary.
test: fmt-check vet build
	$(GO) test ./...
	$(MAKE) --no-print-directory check-captures

# Each capture is checked by a process of its own, JOBS at a time; one that
# does not match fails the target once all have run.
check-captures: build
	@test -n "$(CAPTURES)" || { echo "no shipped captures with expect.json under testdata/captures" >&2; exit 1; }
	@{ for d in $(CAPTURES); do echo "verify $$d expect.json"; done; \
	   for d in $(AUDITS); do echo "audit $$d audit-expect.json"; done; } | \
		xargs -P $(JOBS) -L 1 sh -c '$(BIN)/nsyscheck $$0 $$1 --expect $$1/$$2 > /dev/null'

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

# Profile the bundled program with nsys and export SQLite + CSV reports.
capture: kernel
	@test ! -e "$(CAPTURE)" || { echo "make capture: $(CAPTURE) exists; pass CAPTURE=another/folder" >&2; exit 2; }
	mkdir -p $(CAPTURE)
	cp $(BIN)/pinned $(CAPTURE)/pinned
	cd $(CAPTURE) && $(NSYS) profile -t cuda,nvtx -s none --cpuctxsw=none -o pinned ./pinned --json pinned.results.json > pinned.transcript.txt 2>&1
	cd $(CAPTURE) && $(NSYS) export --type sqlite -o pinned.sqlite pinned.nsys-rep
	cd $(CAPTURE) && $(NSYS) stats --report $(REPORTS) --format csv --output pinned --force-export true pinned.nsys-rep
	rm -f $(CAPTURE)/pinned
	@echo "capture written to $(CAPTURE)"

# Scale the shipped capture to 1M and 10M API rows in $(BENCH_DIR) (about
# 1.2 GiB) and time verify, the loader alone, sqlite3's cuda_api_sum query,
# nsys stats, audit and sqlite3's copy join side by side, plus one-core CSV
# streaming. About 8 minutes;
# see docs/performance.md.
bench:
	$(GO) build -o $(BENCH_DIR)/bin/nsyscheck ./cmd/nsyscheck
	$(GO) build -o $(BENCH_DIR)/bin/loadcapture ./internal/perfbench/cmd/loadcapture
	$(GO) run ./internal/perfbench/cmd/perfbench -dir $(BENCH_DIR) -nsyscheck $(BENCH_DIR)/bin/nsyscheck \
		-loadcapture $(BENCH_DIR)/bin/loadcapture -sizes $(BENCH_SIZES) -copies $(BENCH_COPIES) -capture "$(BIG_CAPTURES)" -reps 3

# Fuzz every parser and check for FUZZTIME each (the seed corpora already
# run in `make test`); anything found lands in PKG/testdata/fuzz/ to keep.
# The transcript and measurements fuzzers also run the plausibility checks
# every loader ends with; FuzzCSVScanner compares the scanner every
# per-record report is read with to encoding/csv through the record bound;
# FuzzMaskSecrets checks the secret detector and its masking.
FUZZTIME ?= 3m
FUZZ_TARGETS := nsyscsv:FuzzCSVTrace nsyscsv:FuzzCSVScanner capture:FuzzTranscript capture:FuzzMeasurements \
	program:FuzzDuplicateKey privacy:FuzzMaskSecrets
fuzz:
	@set -e; for pt in $(FUZZ_TARGETS); do \
		p=$${pt%%:*}; t=$${pt#*:}; \
		echo "fuzz $$p $$t for $(FUZZTIME)"; \
		$(GO) test ./$$p -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME); \
	done

clean:
	rm -rf $(BIN)
