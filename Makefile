# quotesync — build, test and package.
#
#   make test     the full suite (installs the programs it runs, .ci/tools, and
#                 starts a MariaDB server first if none answers, .ci/mariadb)
#   make demo     the zero-setup demo
#   make build    bin/quotesync
#   make emulator bin/quotesync-emulator, the insurer's service in memory
#   make deb      dist/quotesync_<version>_amd64.deb
#   make bench    the benchmarks whose numbers docs/benchmarks.md quotes
#   make soak     the long crash and fault campaigns (minutes)
#   make sites    the cost of a site among 1, 10 and 30 on this machine

GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: all build emulator test lint demo bench soak sites deb clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/quotesync ./cmd/quotesync

emulator:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '-s -w' -o bin/quotesync-emulator ./cmd/quotesync-emulator

# The demo is a module of its own (cmd/quotesync-demo/go.mod), so that its
# embedded MySQL server (go-mysql-server, vitess, logrus) is no requirement
# of the daemon's module; ./... does not reach into it, so every target that
# vets or tests runs it too, as $(DEMO).
DEMO = $(GO) -C cmd/quotesync-demo

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(DEMO) vet ./...
	$(GO) -C deploy/kubernetes vet ./...

# Every package runs under the race detector except the demo's: its embedded
# MySQL server (go-mysql-server) takes ~100 s to compile with -race on two
# cores, and the demo's code is the daemon's own packages, raced here anyway.
# The tests that run the real binary use bin/quotesync (QUOTESYNC_BIN)
# instead of building their own. deploy/kubernetes is a module of its own
# (the Kubernetes API types are its dependency, not quotesync's): its test
# renders the example manifests and decodes them strictly.
test: lint build
	@bash .ci/tools
	@dsn=$$(bash .ci/mariadb) && export QUOTESYNC_TEST_DSN="$$dsn" QUOTESYNC_BIN="$(CURDIR)/bin/quotesync" && \
		$(GO) test -race -count=1 ./... && \
		$(DEMO) test -count=1 ./... && \
		$(GO) -C deploy/kubernetes test -count=1 ./...

demo:
	$(DEMO) run .

# The benchmarks whose figures docs/benchmarks.md quotes (a quarter of an hour: the
# idle-pass benchmarks build 10,000 jobs first).
bench:
	@dsn=$$(bash .ci/mariadb) && QUOTESYNC_TEST_DSN="$$dsn" $(GO) test -run '^$$' -bench . -benchtime 5x -timeout 60m ./sync/ ./shopdb/ ./shopdb/store/ ./cmd/quotesync/

# Runs N sites side by side (each its own `quotesync run`, schema of 1,000
# jobs and emulator instance) for each N of SITES, and prints per site its
# resident memory, CPU per idle pass and connections (about ten minutes).
SITES ?= 1,10,30
sites: build
	@dsn=$$(bash .ci/mariadb) && QUOTESYNC_TEST_DSN="$$dsn" QUOTESYNC_BIN="$(CURDIR)/bin/quotesync" QUOTESYNC_SITES="$(SITES)" \
		$(GO) test -v -run '^$$' -bench '^BenchmarkSites$$' -benchtime 1x -timeout 90m ./cmd/quotesync/

soak:
	@bash .ci/tools
	@dsn=$$(bash .ci/mariadb) && export QUOTESYNC_TEST_DSN="$$dsn" QUOTESYNC_SOAK=1 && \
		$(GO) test -count=1 -timeout 60m ./... && \
		$(DEMO) test -count=1 -timeout 60m ./...

deb: build
	bash systemd/build-deb "$(VERSION)"

clean:
	rm -rf bin dist
