// Package tools turns a client's widget catalog into what generation needs: a compiled
// validator, an index of the catalog's widgets, and the input schemas of the two UI tools
// (addOrUpdateSurface and deleteSurface). It checks every tool request the model makes
// against the catalog and describes each violation precisely enough for the model to
// repair it.
package tools
