// Package docs holds the service's documentation: one Markdown page per subject, which
// README.md and CONTRIBUTING.md at the repository root link to. It has no code; its
// tests keep the links true: every relative link of README.md, CONTRIBUTING.md and the
// pages here must name a file of the repository, and every #anchor a heading of the page
// it points into.
package docs
