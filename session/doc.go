// Package session keeps the catalog a client registered with startSession under a random
// session id, for the turns that follow: in process ([Memory], an LRU whose entries
// expire when idle) or shared by replicas through Redis ([Redis]). Sessions hold a
// pointer to a compiled catalog shared by content (see [catalog.Cache]).
//
// This package is the service's own: its API serves the genui server and may change
// from one release to the next. The packages meant for import are a2ui, catalog, policy
// and schemas.
package session
