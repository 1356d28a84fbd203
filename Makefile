# genui: a GenUI generation service in Go.
#   make run     serve on :3400 (offline model unless GEMINI_API_KEY/GENUI_MODEL is set)
#   make test    install what the tests need, then run every test (CI runs this)
#   make check   gofmt, vet and the -short tests: no installs, no network, a few minutes
#   make bench   benchmarks of the HTTP turn and validation, then make bench-server
#   make bench-server  cmd/genui-bench against a fresh server (BENCH_FLAGS=..., see --help)
#   make bench-docs    the same, writing docs/benchmarks.md (the one page of figures)
#   make fuzz    fuzz every decoder of untrusted input for FUZZTIME each

SHELL := /bin/bash
GO ?= go
FUZZTIME ?= 10s
BIN := bin/genui-server

.PHONY: run build static test check deps test-go fuzz bench bench-server bench-docs vet docker image clean

run:
	$(GO) run ./cmd/genui-server

build:
	$(GO) build -o $(BIN) ./cmd/genui-server

# The build step of the Dockerfile: a static, stripped binary.
static:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags="-s -w" -o $(BIN) ./cmd/genui-server
	@if ldd $(BIN) >/dev/null 2>&1; then echo "$(BIN) is not static"; exit 1; fi
	@echo "$(BIN): static binary, $$(du -h $(BIN) | cut -f1)"

# Everything the tests need that a fresh machine lacks. The npm packages and the Debian
# packages are fetched at the same time.
NPM_DIRS := internal/testkit/jsclient internal/testkit/a2aclient internal/testkit/aguiclient internal/testkit/wsclient internal/testkit/mcpclient web/e2e web/a2ui genui/reflection/e2e
deps:
	@command -v node >/dev/null || { echo "node is required (Debian: apt-get install nodejs npm)"; exit 1; }
	@set -e; logs=$$(mktemp -d); pids=""; \
	for d in $(NPM_DIRS); do \
		echo "npm ci in $$d"; \
		( cd $$d && npm ci --no-audit --no-fund --loglevel=error ) >$$logs/$$(echo $$d | tr / _).log 2>&1 & pids="$$pids $$!:$$d"; \
	done; \
	missing=""; command -v chromium >/dev/null || missing="chromium"; command -v redis-server >/dev/null || missing="$$missing redis-server"; command -v buildah >/dev/null || missing="$$missing buildah"; \
	if [ -n "$$missing" ]; then echo "installing$$missing"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; fi; \
	failed=0; for p in $$pids; do \
		d=$${p#*:}; if ! wait $${p%%:*}; then echo "npm ci in $$d failed:"; cat $$logs/$$(echo $$d | tr / _).log; failed=1; fi; \
	done; rm -rf $$logs; exit $$failed

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...

test-go:
	$(GO) test -race -count=1 ./...

test: deps vet static fuzz test-go

# The inner loop: installs nothing; -short skips what needs Chromium, Redis, buildah or
# Node, and -count=1 runs every test rather than replaying cached results.
check:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...
	$(GO) test -short -count=1 ./...

FUZZ_TARGETS := ./genui/httpapi:FuzzDecode ./genui:FuzzConversation ./genui:FuzzRecord ./genui:FuzzHeldState ./internal/jsonenc:FuzzAppendString ./catalog:FuzzCompile ./a2ui:FuzzParser ./a2ui:FuzzTagged ./a2ui:FuzzBuilder ./a2ui:FuzzDecodeMessage ./a2ui:FuzzDecodeClientMessage ./a2ui:FuzzParseCapabilities ./a2ui:FuzzCompileCatalog ./tools:FuzzCompileClient ./genui/a2aapi:FuzzRequest ./internal/jsonbody:FuzzDecode ./genui/aguiapi:FuzzRun ./genui/wsapi:FuzzJSONRPCMessage ./genui/wsapi:FuzzYieldMessage ./auth:FuzzCheck ./internal/reqlog:FuzzID ./genui/mcpapi:FuzzToolArguments ./policy:FuzzCheckURL

# Each target for FUZZTIME, FUZZ_JOBS (2) at a time (.ci/fuzz says how).
FUZZ_JOBS ?= 2
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) FUZZ_JOBS=$(FUZZ_JOBS) .ci/fuzz $(FUZZ_TARGETS)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./genui/ ./genui/httpapi/ ./genui/durable/ ./catalog/
	$(MAKE) bench-server

# Added latency, throughput, CPU and memory of the built server over real HTTP;
# e.g. BENCH_FLAGS='--phases latency --json bench.json'.
BENCH_FLAGS ?=
bench-server:
	$(GO) run ./cmd/genui-bench $(BENCH_FLAGS)

# docs/benchmarks.md, from one run of the phases the docs link to (about ten minutes).
BENCH_DOC_PHASES := latency,throughput,sessions,catalogs,streams,bytes,a2ui,conversations,a2a,ws,open,policy,redis
bench-docs:
	$(GO) run ./cmd/genui-bench --phases $(BENCH_DOC_PHASES) --markdown docs/benchmarks.md $(BENCH_FLAGS)

docker:
	docker build -t genui-server .

# The same image without a Docker daemon: buildah (vfs storage, chroot isolation, as root)
# leaves genui-server in its local storage; e.g. IMAGE_FLAGS='--build-arg GO_IMAGE=…'.
IMAGE_FLAGS ?=
image:
	buildah --storage-driver vfs bud --isolation chroot $(IMAGE_FLAGS) -t genui-server .

clean:
	rm -rf bin $(addsuffix /node_modules,$(NPM_DIRS))
