package durable

import (
	"context"
	"errors"
	"time"

	"github.com/genuiserver/genui/internal/rediserr"
)

// Stream log errors.
var (
	// ErrStreamNotFound reports an unknown or expired stream id.
	ErrStreamNotFound = errors.New("stream not found")
	// ErrProducerLost reports a stream whose producer stopped (its process died) before
	// writing the final record.
	ErrProducerLost = errors.New("stream producer lost")
	// ErrStreamExists reports a Create with an id already in use.
	ErrStreamExists = errors.New("stream already exists")
	// ErrUnavailable reports that a shared log (Redis) cannot be reached; the request may
	// succeed later. It is the same error as session.ErrUnavailable.
	ErrUnavailable = rediserr.ErrUnavailable
)

// Record is one entry of a stream log.
type Record struct {
	// Seq is the record's position, from 1.
	Seq int
	// Data is the encoded record; the log does not interpret it.
	Data []byte
	// Final marks the last record of the stream.
	Final bool
}

// Log stores streams of records durably enough for clients to re-attach: each stream is
// written by one Producer and read by any number of Readers, which replay what was
// stored and then follow the live tail. A finished stream is kept for the log's retention
// after its last record, then forgotten.
type Log interface {
	// Create starts a new, empty stream.
	Create(ctx context.Context, id string) (Producer, error)
	// Read returns a Reader of the records after seq after (0: from the start), or an error
	// wrapping ErrStreamNotFound.
	Read(ctx context.Context, id string, after int) (Reader, error)
	// Cancel asks the stream's producer, wherever it runs, to stop. It fails with
	// ErrStreamNotFound for unknown streams; cancelling a finished stream does nothing.
	Cancel(ctx context.Context, id string) error
	// Ready reports whether the log can serve requests.
	Ready(ctx context.Context) error
}

// Producer writes one stream.
type Producer interface {
	// Append stores the next record. A record is stored before Append returns, so a
	// reader never misses what a client was sent. After a final record nothing more may
	// be appended. An Append that failed may be tried again with the same record: it is
	// stored once, whether or not the failed try stored it.
	Append(ctx context.Context, data []byte, final bool) error
	// Watched reports whether any reader, in any process sharing the log, is attached.
	Watched(ctx context.Context) bool
	// Cancelled is closed when Cancel was called for the stream.
	Cancelled() <-chan struct{}
	// Close releases the producer. A stream closed without a final record reads as
	// ErrProducerLost after its stored records.
	Close()
}

// Reader follows one stream.
type Reader interface {
	// Next returns the next record, waiting for it at most wait (0: no limit). It returns
	// ok false when wait passed first, and an error wrapping ErrProducerLost when the
	// producer vanished before the final record. After the final record it returns
	// io.EOF.
	Next(ctx context.Context, wait time.Duration) (rec Record, ok bool, err error)
	// Close detaches the reader.
	Close()
}
