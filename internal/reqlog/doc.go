// Package reqlog names each request: its id (an incoming X-Request-Id when short and
// printable, else a new one) and route travel in its context, and a slog.Handler adds them
// to every line logged with that context, the lines of Genkit and other libraries
// included.
package reqlog
