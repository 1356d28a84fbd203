// Package durable stores the streams of turns so that a stream survives its client: an
// append-only log of records with sequence numbers, written by one producer and read by any
// number of readers, which replay what was stored and then follow the live tail. A
// [MemoryLog] serves one process; a [RedisLog] lets every replica sharing a Redis read,
// watch and cancel any stream. [durabletest.TestLog] is the conformance suite both pass.
//
// This package is the service's own: its API serves the genui server and may change
// from one release to the next. The packages meant for import are a2ui, catalog, policy
// and schemas.
package durable
