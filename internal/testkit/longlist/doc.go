// Package longlist is a test kit for long A2UI lists: what a model writes for one, and
// the size of the final state of what a client received of it.
package longlist
