// Package jsclient holds the compatibility test against the official Genkit JS client.
//
// The test ([TestGenkitJSClient]) serves the API in process with the offline model and runs
// compat.test.mjs with `node --test`, which calls it through runFlow and streamFlow from
// genkit/beta/client. It needs Node.js and `npm ci` (or `npm install`) in this directory;
// without them it skips, unless the CI environment variable is set.
package jsclient
