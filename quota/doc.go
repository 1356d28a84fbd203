// Package quota bounds what each caller may ask of the service: the rate at which it
// starts turns (a token bucket), the turns it runs at once, the turns all callers run at
// once, and how many new catalogs and sessions it adds to the shared caches per hour.
// It also carries how many conversations a caller may have stored at once, which the
// conversation store counts. Callers are named by the key the auth package gives them;
// the limiters of callers not seen for a while are forgotten, so memory stays bounded.
//
// The limits live in each process unless [WithRedis] names a Redis: then a caller's rate,
// its turns at once and its hourly catalogs and sessions are counted in Redis, shared by
// every replica that names it, so N replicas never give a caller more than its limit.
//
// This package is the service's own: its API serves the genui server and may change
// from one release to the next. The packages meant for import are a2ui, catalog, policy
// and schemas.
package quota
