// Package streamresp writes a streamed HTTP response (NDJSON, SSE): the headers at once,
// each write flushed as it is made, and a keepalive whenever the stream has been silent
// for a while, so that proxies and clients keep the connection open.
package streamresp
