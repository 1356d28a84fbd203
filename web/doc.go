// Package web serves the browser playground: a page that starts a session with a widget
// catalog, chats with the model over /generateUi, renders the streamed surfaces live,
// sends UI events back like the Flutter client, and shows every raw stream event with its
// timing. Its A2UI mode chats over /generateA2ui instead and draws the A2UI surfaces
// (v0.9 or v0.8) with the official A2UI web renderer, sending the user's actions back.
// Either mode can run over one WebSocket to /ws (JSON-RPC 2.0, package genui/wsapi, when
// the server registers it): a session the server keeps, a prompt per message or action,
// and a client tool the page declares and answers (getLocation, the city it is set to).
//
// The page is plain ES modules and CSS embedded in the binary (static/), with no build
// step of its own. The A2UI renderer (@a2ui/lit and @a2ui/web_core) is the exception: it
// is bundled by web/a2ui (npm run build there) into static/a2ui-v09.js and
// static/a2ui-v08.js, which are checked in; a test rebuilds them and requires the same
// bytes. Mount it with httpapi.WithPage(web.Handler()).
package web
