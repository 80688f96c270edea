# quotesync — build, test and package.
#
#   make test     the full suite (starts a MariaDB server first if none answers)
#   make demo     the zero-setup demo
#   make build    bin/quotesync
#   make deb      dist/quotesync_<version>_amd64.deb
#   make bench    the benchmarks whose numbers README.md quotes
#   make soak     the long crash and fault campaigns (minutes)

GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: all build test lint demo bench soak fuzz clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/quotesync ./cmd/quotesync

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

test: lint
	@dsn=$$(bash .ci/mariadb) && QUOTESYNC_TEST_DSN="$$dsn" $(GO) test -race -count=1 ./...

demo:
	$(GO) run ./cmd/quotesync-demo

bench:
	@dsn=$$(bash .ci/mariadb) && QUOTESYNC_TEST_DSN="$$dsn" $(GO) test -run '^$$' -bench . -benchtime 5x ./...

soak:
	@dsn=$$(bash .ci/mariadb) && QUOTESYNC_TEST_DSN="$$dsn" QUOTESYNC_SOAK=1 $(GO) test -count=1 -timeout 60m ./...

clean:
	rm -rf bin dist
