# syntax=docker/dockerfile:1
# Build: docker build -t genui-server .
# Run:   docker run -p 3400:3400 -e GEMINI_API_KEY=… genui-server
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/genui-server ./cmd/genui-server

# Distroless static: CA certificates, tzdata and a non-root user, no shell.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/genui-server /usr/local/bin/genui-server
USER nonroot:nonroot
EXPOSE 3400
# Configuration is by environment: PORT or GENUI_ADDR, GENUI_MODEL, GEMINI_API_KEY, …
# (see README or `genui-server --help`).
ENV GENUI_LOG_FORMAT=json
ENTRYPOINT ["/usr/local/bin/genui-server"]
