// Package mcpclient holds the compatibility test of the official TypeScript MCP SDK
// (@modelcontextprotocol/sdk, installed from npm by `make deps`) against the MCP
// endpoint (package genui/mcpapi) of two replicas sharing Redis. It has no code of its
// own: see mcpclient_test.go and replicas.test.mjs.
package mcpclient
