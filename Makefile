# genui: a GenUI generation service in Go.
#   make run     serve on :3400 (offline model unless GEMINI_API_KEY/GENUI_MODEL is set)
#   make test    install what the tests need, then run every test (CI runs this)
#   make bench   benchmarks of the HTTP turn and validation, then make bench-server
#   make bench-server  cmd/genui-bench against a fresh server (BENCH_FLAGS=..., see --help)
#   make fuzz    fuzz every decoder of untrusted input for FUZZTIME each

SHELL := /bin/bash
GO ?= go
FUZZTIME ?= 10s
BIN := bin/genui-server

.PHONY: run build static test deps test-go fuzz bench bench-server vet docker image clean

run:
	$(GO) run ./cmd/genui-server

build:
	$(GO) build -o $(BIN) ./cmd/genui-server

# The build step of the Dockerfile: a static, stripped binary.
static:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags="-s -w" -o $(BIN) ./cmd/genui-server
	@if ldd $(BIN) >/dev/null 2>&1; then echo "$(BIN) is not static"; exit 1; fi
	@echo "$(BIN): static binary, $$(du -h $(BIN) | cut -f1)"

# Everything the tests need that a fresh machine lacks.
deps:
	@command -v node >/dev/null || { echo "node is required (Debian: apt-get install nodejs npm)"; exit 1; }
	cd internal/jsclient && npm ci --no-audit --no-fund --loglevel=error
	cd internal/a2aclient && npm ci --no-audit --no-fund --loglevel=error
	cd internal/aguiclient && npm ci --no-audit --no-fund --loglevel=error
	cd internal/wsclient && npm ci --no-audit --no-fund --loglevel=error
	@missing=""; command -v chromium >/dev/null || missing="chromium"; command -v redis-server >/dev/null || missing="$$missing redis-server"; command -v buildah >/dev/null || missing="$$missing buildah"; \
	if [ -n "$$missing" ]; then echo "installing$$missing"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; fi
	cd web/e2e && npm ci --no-audit --no-fund --loglevel=error
	cd web/a2ui && npm ci --no-audit --no-fund --loglevel=error
	cd genui/reflection/e2e && npm ci --no-audit --no-fund --loglevel=error

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	$(GO) vet ./...

test-go:
	$(GO) test -race -count=1 ./...

test: deps vet static fuzz test-go

FUZZ_TARGETS := ./genui/httpapi:FuzzDecode ./genui:FuzzConversation ./genui:FuzzRecord ./genui:FuzzHeldState ./internal/jsonenc:FuzzAppendString ./catalog:FuzzCompile ./a2ui:FuzzParser ./a2ui:FuzzTagged ./a2ui:FuzzBuilder ./a2ui:FuzzDecodeMessage ./a2ui:FuzzDecodeClientMessage ./a2ui:FuzzParseCapabilities ./a2ui:FuzzCompileCatalog ./tools:FuzzCompileClient ./genui/a2aapi:FuzzRequest ./internal/jsonbody:FuzzDecode ./genui/aguiapi:FuzzRun ./genui/wsapi:FuzzMessage ./genui/yieldapi:FuzzMessage ./auth:FuzzCheck ./internal/reqlog:FuzzID

# Go 1.26's fuzz coordinator can fail a target with a bare "context deadline exceeded"
# when -fuzztime ends while a worker is mid-call (go.dev/issue/75804, fixed in Go 1.27):
# such a run, which wrote no failing input, is run once more; a written input fails.
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; log=$$(mktemp); \
		for try in 1 2; do \
			echo "fuzz $$pkg $$fn ($(FUZZTIME))"; \
			if $(GO) test $$pkg -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) >$$log 2>&1; then break; fi; \
			if [ $$try = 1 ] && grep -q '^    context deadline exceeded$$' $$log && ! grep -q 'Failing input written' $$log; then \
				echo "fuzz $$fn: the coordinator's deadline race (go.dev/issue/75804), no failing input; again"; continue; fi; \
			cat $$log; rm -f $$log; exit 1; \
		done; rm -f $$log; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./genui/ ./genui/httpapi/ ./genui/durable/ ./catalog/
	$(MAKE) bench-server

# Added latency, throughput, CPU and memory of the built server over real HTTP;
# e.g. BENCH_FLAGS='--phases latency --json bench.json'.
BENCH_FLAGS ?=
bench-server:
	$(GO) run ./cmd/genui-bench $(BENCH_FLAGS)

docker:
	docker build -t genui-server .

# The same image without a Docker daemon: buildah (vfs storage, chroot isolation, as root)
# leaves genui-server in its local storage; e.g. IMAGE_FLAGS='--build-arg GO_IMAGE=…'.
IMAGE_FLAGS ?=
image:
	buildah --storage-driver vfs bud --isolation chroot $(IMAGE_FLAGS) -t genui-server .

clean:
	rm -rf bin internal/jsclient/node_modules internal/a2aclient/node_modules internal/aguiclient/node_modules internal/wsclient/node_modules
