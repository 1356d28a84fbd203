// Package a2uitest checks A2UI messages against the official JSON Schemas of the A2UI
// specification, for tests: a server message against server_to_client.json of its
// version, with its components against the catalog it names; a client message against
// client_to_server.json.
//
// The schemas are read from the specification as published: the directory named by
// $A2UI_SPEC_DIR, else ../shared/a2ui-spec next to the module (google/A2UI's
// specification files), else the copy the npm package @a2ui/web_core ships
// (web/a2ui/node_modules, installed by make deps).
package a2uitest
