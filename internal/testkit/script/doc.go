// Package script is the queue, capture and stop machinery shared by the
// scripted model servers (fakegemini, fakeopenai, fakeollama): a [Script]
// holds the FIFO of replies that captured requests take before a fallback
// answers them, the log of captured requests and a wait on it, and the stop
// signal of a closing server; a [Call] is the state of one request while it
// is answered (done, cancelled) and writes its streamed frames.
package script
