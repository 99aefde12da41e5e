# cairn — run `make help` for the targets.

GO       ?= go
PKGS     := ./...
# The packages whose tests keep rows in the vault's database: make test runs
# them a second time on PostgreSQL (CAIRN_TEST_BACKEND=postgres).
PGPKGS   := ./index/... ./admit/... ./worktree/... ./sqlite/... ./durable/... ./app/...

.PHONY: help build test test-short bench fuzz lint tidy clean

help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## Build the cairn binary into ./cairn.
	$(GO) build -o cairn ./cmd/cairn

test: ## Run every test (what CI runs): vet (for macOS too), then the tests with fuzz seeds, the MCP conformance suite, the real agent CLIs (installed once with npm) and a local PostgreSQL (started if down); then the database's subsystems again on PostgreSQL.
	$(GO) vet $(PKGS)
	GOOS=darwin GOARCH=arm64 $(GO) vet $(PKGS)
	@conf="$$(./scripts/conformance.sh)" && eval "$$conf" && \
	  agents="$$(./scripts/agents.sh)" && eval "$$agents" && \
	  pg="$$(./scripts/postgres.sh)" && eval "$$pg" && \
	  export CAIRN_CONFORMANCE_SUMMARY="$$(mktemp)" && $(GO) test -count=1 -timeout 30m $(PKGS) && \
	  { cat "$$CAIRN_CONFORMANCE_SUMMARY"; rm -f "$$CAIRN_CONFORMANCE_SUMMARY"; } && \
	  if [ -n "$${CAIRN_TEST_POSTGRES:-}" ]; then CAIRN_TEST_BACKEND=postgres $(GO) test -count=1 -timeout 30m $(PGPKGS); fi

test-short: ## Run the tests without the slow crash and multi-process ones.
	$(GO) test -short $(PKGS)

bench: ## Run the benchmarks behind BENCHMARKS.md, 100k-page vaults included (slow); results in bench/latest.txt.
	./scripts/bench.sh

fuzz: ## Fuzz each parser and merge for FUZZTIME each (default 60s).
	@./scripts/fuzz.sh $(or $(FUZZTIME),60s)

lint: ## Check formatting and vet (for macOS too).
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	GOOS=darwin GOARCH=arm64 $(GO) vet $(PKGS)

tidy: ## Tidy go.mod and go.sum.
	$(GO) mod tidy

clean: ## Remove build output.
	rm -f cairn
