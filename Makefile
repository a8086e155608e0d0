# ingest: make test is the whole check (services + vet + unit + integration, with -race).
SHELL := /bin/bash
GO ?= go
PKGS := ./...
FUZZTIME ?= 10s
TEST_TIMEOUT ?= 25m
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

# The integration tests read the service addresses that scripts/services prints.
SERVICE_ENV = eval "$$(scripts/services env)"

.PHONY: all build demo test unit integration vet lint services services-down services-status fuzz clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o bin/ingest ./cmd/ingest

## demo: the quickstart from a fresh clone (services, demo data, snapshot, changes, tail).
demo: build
	scripts/demo

## test: start MariaDB 10.11 and 11.4 and Kafka, vet, then unit and integration tests with the
## race detector (the source, snapshot, all-types and end-to-end tests once per server;
## INGEST_TEST_SERVERS=mariadb-10.11 restricts them to one).
## The output is gotestsum's (pinned in tools/go.mod): one line per package, every failure in
## full; then internal/matrixreport names each source server's runs per package from the
## recorded events and fails when a server failed or had no passing run.
TEST_JSON ?= .cache/test-events.json
test: services vet
	@mkdir -p $(dir $(TEST_JSON))
	@$(SERVICE_ENV); rc=0; \
	  $(TOOLS) gotestsum --format pkgname --jsonfile $(TEST_JSON) -- -race -tags integration -count=1 -timeout $(TEST_TIMEOUT) $(PKGS) || rc=$$?; \
	  $(GO) run ./internal/matrixreport < $(TEST_JSON) || { [ $$rc -ne 0 ] || rc=1; }; \
	  exit $$rc

## chaos: the fault suite's long mode (chaos/): CHAOS_DURATION of faults (default 10m) under a
## randomized workload, on a private MariaDB and Kafka that it starts and stops itself, once
## per source server of CHAOS_SERVERS (MariaDB 10.11, then 11.4). A short version runs inside
## make test, on 10.11.
CHAOS_DURATION ?= 10m
CHAOS_TIMEOUT ?= 90m
CHAOS_SERVERS ?= mariadb mariadb114
.PHONY: chaos
chaos:
	@set -e; for s in $(CHAOS_SERVERS); do \
	  echo "== chaos on $$s"; \
	  INGEST_CHAOS_SERVER=$$s INGEST_CHAOS_LONG=1 CHAOS_DURATION=$(CHAOS_DURATION) $(GO) test -tags integration -count=1 -v -timeout $(CHAOS_TIMEOUT) ./chaos/; \
	done

## unit: the tests that need no server (what plain `go test ./...` runs).
unit:
	$(GO) test -race -count=1 $(PKGS)

vet:
	$(GO) vet $(PKGS)
	$(GO) vet -tags integration $(PKGS)
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt needed: $$unformatted"; exit 1; fi
	@$(MAKE) --no-print-directory lint

## lint: staticcheck (checks in staticcheck.conf), errcheck (exceptions in .errcheck-excludes,
## test files not checked) and ineffassign, with and without the integration tag. The versions are
## pinned in tools/go.mod; the first run on a machine builds them (a few minutes).
TOOLS = $(GO) tool -modfile=tools/go.mod
LINT = $(TOOLS)
lint:
	$(LINT) staticcheck $(PKGS)
	$(LINT) staticcheck -tags integration $(PKGS)
	$(LINT) errcheck -exclude .errcheck-excludes -ignoretests -tags integration $(PKGS)
	$(LINT) ineffassign $(PKGS)
	GOFLAGS=-tags=integration $(LINT) ineffassign $(PKGS)

## bench: the benchmark suite against the local services (bench/README.md; BENCH_ROWS=100000 BENCH_SECONDS=5 for a short run).
.PHONY: bench
bench: build
	scripts/bench

## bench-peers: ingest against Debezium's MariaDB connector in Kafka Connect and Flink CDC's MySQL source in Flink (bench/README.md; fetches the jars once into .cache/peers).
.PHONY: bench-peers
bench-peers: build
	scripts/bench-peers

## bench-curves: the cost curves: tables in one pipeline, columns, row size, transaction size (bench/README.md, "Curves").
.PHONY: bench-curves
bench-curves: build
	scripts/bench -only curves -db $${BENCH_CURVES_DB:-ingestcurves}

## bench-fleet: 100 pipelines on 3 `ingest serve` workers: memory and goroutines per pipeline, and the time a worker's leaving takes (bench/README.md).
.PHONY: bench-fleet
bench-fleet: build
	scripts/bench-fleet

services:
	scripts/services up

services-down:
	scripts/services down

services-status:
	scripts/services status

## fuzz: every fuzz target for FUZZTIME each (short by default; FUZZTIME=10m make fuzz for a long run).
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

clean:
	rm -rf bin
