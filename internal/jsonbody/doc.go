// Package jsonbody reads and decodes the JSON bodies of requests. Every error is a
// *genui.Error naming the field at fault (conversation[1].parts[0].text), and a body over
// the size limit or not JSON carries its HTTP status (413, 415) in a StatusError.
package jsonbody
