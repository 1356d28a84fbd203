// Command a2ui checks A2UI the way the genui service does, for agents written in any
// language: a2ui validate judges A2UI messages (JSON Lines or a JSON array on standard
// input) against a catalog, as a renderer receives them, and prints each violation as a
// JSON line {"index","path","code","message"}; a2ui parse reads a model's streamed text
// and prints the prose and the A2UI messages it yields, component by component, as the
// service would send them. Both apply the service's default UI policy besides the catalog
// (--policy FILE for another, --no-policy for none), so a javascript: image or an
// obscured field is a violation too. Exit status 0 means valid, 1 violations, 2 bad
// usage or an unreadable catalog.
//
//	a2ui validate --catalog catalog.json < messages.jsonl
//	a2ui validate --capabilities caps.json --version v0.8 --shown main < update.json
//	my-agent | a2ui parse --catalog https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json
package main
