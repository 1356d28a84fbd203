// Package policy says what of the UI a model writes is safe to show, beyond being valid
// against the client's catalog: a valid surface may still hold a javascript: image, an
// action that opens a data: page, or a password field a prompt injection asked for.
//
// A [Policy] is a set of rules, each with a code that its violations carry:
//
//   - [UnsafeURL]: a URL in the UI (an image, a video, a link to open, a theme's icon,
//     a link in a Text's Markdown, a data-model value one of them is bound to) must have
//     an allowed scheme and, when hosts are listed, an allowed host. URLs are read as a
//     browser reads them (the WHATWG URL Standard, through github.com/nlnwa/whatwg-url):
//     leading and trailing C0 controls and spaces are trimmed, tabs and newlines dropped,
//     schemes compared in lower case, hosts in their ASCII form. Defaults: https: and
//     http:, plus mailto: and tel: for links; relative URLs allowed; data:image/… raster
//     images only when "data" is among the schemes; no user info; no URL computed by a
//     function at run time unless allowed. A data-model string that runs script or
//     reads local data (javascript:, vbscript:, file:, blob:, a data: document) is
//     refused wherever it is, bound or not.
//   - [FunctionNotAllowed]: the functions the model may call (actions' functionCall,
//     dynamic values), when the policy lists them.
//   - [Inaccessible]: an Image without a description, a Button whose content has no
//     text and no accessible label, an input (TextField, CheckBox, …) without a label.
//   - [SensitiveInput]: an obscured (password) field.
//
// Each rule can be turned off ([Without]). [Default] is every rule on with the default
// URL settings. [Decode] reads a policy, with overrides per caller, from JSON.
//
// The package judges values; the a2ui package applies a policy to A2UI messages
// (a2ui.WithPolicy), and [Policy.CheckDefinition] to the surface definitions of a genui
// widget catalog. Messages never repeat an offending URL.
//
// This package is a library with a stable API: it depends on nothing of the service
// above it, and its exported names change only with the module's major version.
package policy
