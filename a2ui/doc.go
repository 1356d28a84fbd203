// Package a2ui implements the A2UI protocol (https://a2ui.org), versions v0.9 and v0.8,
// for a server that has a model write A2UI: the catalogs a client can advertise and the
// built-in ones, the client's capabilities and messages, a parser that reads A2UI
// messages out of a model's streamed text component by component, and a [Builder] that
// checks what the model writes against the catalog and A2UI's rules and turns it into
// the messages a client may receive: every state of a surface a client sees is valid
// A2UI, from the first component on.
package a2ui
