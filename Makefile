# dshd — see README.md. Every target here is documented there.
GO      ?= go
BIN     := bin/dshd
PKGS    := ./...
FUZZTIME ?= 10s

.PHONY: build cross dist test schema bench bench-deps bench-table fuzz interop interop-deps demo fmt-check faults golden clean

build:
	$(GO) build -o $(BIN) ./cmd/dshd

# The six targets editors run on; release archives are built for the same.
CROSS_TARGETS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64

# Builds and vets every package (tests included) for each target.
cross:
	@set -e; for t in $(CROSS_TARGETS); do \
		echo "cross: $$t"; \
		CGO_ENABLED=0 GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) build ./...; \
		CGO_ENABLED=0 GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) vet ./...; \
	done

# Release artifacts: make dist VERSION=v1.2.3 RELEASE_URL=https://…/download/v1.2.3
# writes one archive for each of the six targets, SHA256SUMS and the ACP Registry
# manifest agent.json into DIST. Reproducible: the archives' times are the
# commit's (SOURCE_DATE_EPOCH overrides). LICENSE, AUTHORS: manifest fields.
DIST ?= dist
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
LICENSE ?= proprietary
AUTHORS ?= dshd maintainers
dist:
	@test -n "$(VERSION)" || { echo "make dist: set VERSION=vX.Y.Z"; exit 2; }
	@test -n "$(RELEASE_URL)" || { echo "make dist: set RELEASE_URL=https://…/vX.Y.Z (where the archives will be downloadable)"; exit 2; }
	$(GO) run ./scripts/mkdist -go '$(GO)' -version '$(VERSION)' -url '$(RELEASE_URL)' -out '$(DIST)' \
		-mtime '$(SOURCE_DATE_EPOCH)' -license '$(LICENSE)' -authors '$(AUTHORS)'

# The protocol tests validate every message against the official ACP schema, so make test
# never runs without it: ../shared/acp/schema.json, $$ACP_SCHEMA, or the official SDK's
# copy, which this target installs (npm ci) when neither is there.
SDK_SCHEMA := interop/node_modules/@agentclientprotocol/sdk/schema/v1/schema.json

test: schema
	$(GO) vet $(PKGS)
	ACP_SCHEMA_REQUIRED=1 $(GO) test -race $(PKGS)

schema:
	@if [ -z "$$ACP_SCHEMA" ] && [ ! -f ../shared/acp/schema.json ] && [ ! -f $(SDK_SCHEMA) ]; then \
		echo "make test: no ACP schema found; installing the official SDK that ships it (make interop-deps)"; \
		$(MAKE) --no-print-directory interop-deps || { echo "make test: could not install the ACP schema: install Node.js and npm, or set ACP_SCHEMA=/path/to/schema.json"; exit 1; }; \
	fi

# ripgrep and fd, the references of the search benchmarks and of TestGrepMatchesRipgrep
# (Debian packages; needs root or sudo).
bench-deps:
	@command -v rg >/dev/null && command -v fdfind >/dev/null || { \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq ripgrep fd-find >/dev/null; }

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
	rm -rf bin dist
