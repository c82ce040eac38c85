# dshd — see README.md. Every target here is documented there.
GO      ?= go
BIN     := bin/dshd
PKGS    := ./...
FUZZTIME ?= 10s

.PHONY: build test bench bench-table fuzz interop interop-deps demo fmt-check faults golden clean

build:
	$(GO) build -o $(BIN) ./cmd/dshd

test:
	$(GO) vet $(PKGS)
	$(GO) test -race $(PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# Each fuzz target runs for FUZZTIME (see scripts/fuzz.sh).
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) PKGS='$(PKGS)' scripts/fuzz.sh

# The official TypeScript client SDK drives the built binary (needs Node and npm).
interop: build interop-deps
	cd interop && node --test

# Installs the official SDK (npm registry only); its copy of the ACP schema is what the
# protocol tests validate against when ../shared/acp/schema.json is absent.
interop-deps:
	cd interop && npm ci --no-audit --no-fund

# Builds dshd and runs one real ACP session on the embedded demo script,
# printing a readable transcript.
demo: build
	$(GO) run ./cmd/dshd-demo --dshd $(BIN)

# The fault suite: a hostile client, disconnects, kill -9 crashes and policy
# attacks against the real binary (built by the tests themselves).
faults:
	$(GO) test -count=1 -timeout 15m -run 'Fault' ./e2e/

# Reruns every benchmark and writes one table (bench/results.md).
bench-table:
	./scripts/bench-table.sh

golden:
	$(GO) test ./acp ./bridge ./presentation ./registry ./model/openai ./model/anthropic -update

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

clean:
	rm -rf bin
