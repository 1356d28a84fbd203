// Package durable runs generateUi turns into a stream log, so that a stream survives its
// client: the turn runs detached from the request, every event is stored before any client
// sees it, and clients (the original one or any other, on any replica sharing the log)
// read the stream by id — replay from any offset, then the live tail, then the result or
// error. A turn nobody watches is cancelled after a grace period; an explicit cancel stops
// it at once. Transports only encode the items they read.
package durable
