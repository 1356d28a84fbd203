// Package ids makes the random identifiers of sessions, streams and readers.
package ids
