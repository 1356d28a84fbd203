// Package session keeps what outlives one request: the catalog a client registered with
// startSession, under a random session id, and compiled catalogs shared by content hash so
// that identical catalogs are compiled and stored once.
package session
