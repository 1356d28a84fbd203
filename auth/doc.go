// Package auth identifies the callers of the service and keeps what each one creates
// apart from the others.
//
// An [Authenticator] checks the credentials of an HTTP request: an API key (sent as
// "Authorization: Bearer <key>" or "X-API-Key: <key>", stored only as its SHA-256) or a
// JWT bearer token (verified with a JWKS URL, a PEM public key or an HMAC secret; its
// issuer, audience, expiry and not-before checked). Browsers cannot set headers on a
// WebSocket, so the endpoints that upgrade may also take the credential from an
// access_token query parameter.
//
// The [Caller] travels in the request's context ([NewContext], [FromContext]), as
// Genkit's action context too, so flows see it. With authentication off every request
// has the one anonymous caller.
//
// [Scope] maps the id of a session, stream, conversation or task to the key it is stored
// under: the id itself for the anonymous caller, the id behind the caller's own prefix
// otherwise. A caller looking up another caller's id therefore finds nothing, exactly as
// for an id that never existed.
//
// This package is the service's own: its API serves the genui server and may change
// from one release to the next. The packages meant for import are a2ui, catalog, policy
// and schemas.
package auth
