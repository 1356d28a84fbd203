# syntax=docker/dockerfile:1
# Build: docker build -t genui-server .   (or `make image`: buildah, no daemon)
# Run:   docker run --read-only -p 3400:3400 -e GEMINI_API_KEY=… genui-server
#
# The base images are build arguments, so a mirror or a pinned digest can stand in:
#   docker build --build-arg GO_IMAGE=mirror.example/golang:1.26-bookworm \
#     --build-arg RUNTIME_IMAGE=mirror.example/distroless/static-debian12:nonroot .
# GOPROXY and GOFLAGS are build arguments for the Go command too, e.g.
#   --build-arg GOPROXY=https://goproxy.example,direct
ARG GO_IMAGE=golang:1.26-bookworm
ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot

FROM ${GO_IMAGE} AS build
ARG GOPROXY=https://proxy.golang.org,direct
ARG GOFLAGS=
# Fixed cache locations, whatever the base image's HOME and GOPATH: the cache mounts
# below keep modules and compiled packages between builds. The RUN steps are in exec form,
# so the build image needs the Go toolchain and no shell.
ENV CGO_ENABLED=0 GOMODCACHE=/go/pkg/mod GOCACHE=/root/.cache/go-build
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod ["go", "mod", "download"]
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    ["go", "build", "-trimpath", "-ldflags=-s -w", "-o", "/out/genui-server", "./cmd/genui-server"]

# Distroless static: CA certificates, tzdata and a non-root user (nonroot, uid 65532), no
# shell. The server writes nothing to disk, so the root filesystem may be read-only.
FROM ${RUNTIME_IMAGE}
COPY --from=build /out/genui-server /usr/local/bin/genui-server
# Numeric, so that Kubernetes' runAsNonRoot can check it without reading /etc/passwd.
USER 65532:65532
EXPOSE 3400
# Configuration is by environment: PORT or GENUI_ADDR, GENUI_MODEL, GEMINI_API_KEY, …
# (see README or `genui-server --help`).
ENV GENUI_LOG_FORMAT=json
ENTRYPOINT ["/usr/local/bin/genui-server"]
