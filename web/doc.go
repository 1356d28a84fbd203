// Package web serves the browser playground: a page that starts a session with a widget
// catalog, chats with the model over /generateUi, renders the streamed surfaces live,
// sends UI events back like the Flutter client, and shows every raw stream event with its
// timing.
//
// The page is plain ES modules and CSS embedded in the binary (static/); there is no build
// step. Mount it with httpapi.WithPage(web.Handler()).
package web
