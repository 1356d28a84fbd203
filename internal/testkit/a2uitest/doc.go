// Package a2uitest checks A2UI messages against the official JSON Schemas of the A2UI
// specification, for tests: a server message against server_to_client.json of its
// version, with its components against the catalog it names; a client message against
// client_to_server.json.
//
// The schemas are the specification's as published (google/A2UI's specification files,
// Apache License 2.0, see spec/LICENSE), vendored under spec/ so that the tests need
// nothing installed; $A2UI_SPEC_DIR names another copy of the specification to check
// against (its own layout, or @a2ui/web_core's).
package a2uitest
