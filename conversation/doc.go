// Package conversation keeps the conversations the server holds for its clients, so that
// a client sends only its new messages: each conversation's history (the messages of its
// turns, one JSON object a line, as the client sent and received them), the calls of
// client tools it waits for, and the endpoint it belongs to. One turn at a time holds a
// conversation ([Store.Begin]); the turn's end appends to it and lets it go
// ([Hold.Commit]).
//
// Conversations live in process ([Memory]: bounded by count and bytes, expiring when
// idle) or in Redis ([Redis]), shared by replicas: a conversation started on one continues
// on any other. A held conversation costs no goroutine: the store holds state, not turns.
//
// Both stores count the conversations of each caller ([WithCallerLimit]): a caller at its
// limit cannot begin a new conversation until one of its own expires or is deleted. They
// also say how many conversations wait for the results of client tools ([Counter]).
//
// This package is the service's own: its API serves the genui server and may change
// from one release to the next. The packages meant for import are a2ui, catalog, policy
// and schemas.
package conversation
