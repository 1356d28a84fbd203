// Package transport is what a transport hands the server that mounts it: its routes, each
// an http.Handler with the protocol that writes its errors.
//
// A transport package (httpapi's Genkit flows, a2aapi, aguiapi, mcpapi, wsapi) decodes a
// request, calls the genui.Service and encodes the answer; it knows nothing of the router.
// The server (httpapi.New) mounts every Route behind one middleware stack: request id,
// recovery, security headers, CORS, authentication and the caller, the body limit,
// metrics. A Route served without that stack answers 500 and logs why: the stack marks
// each request it passes (Mark), and a Route refuses a request it did not mark.
//
// This package is the service's own: its API serves the genui server and may change
// from one release to the next. The packages meant for import are a2ui, catalog, policy
// and schemas.
package transport
