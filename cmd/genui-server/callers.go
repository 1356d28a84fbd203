package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/genuiserver/genui/genui/models"
)

// The callers file (--callers-file) sets what one caller gets in place of the server's
// settings: its token budget, its default model (one or a fallback chain) and the models
// its requests may name.
//
//	{
//	  "callers": {
//	    "key:partner": {"tokenBudget": 2000000, "model": "googleai/gemini-2.5-pro",
//	                    "modelsAllowed": ["googleai/gemini-2.5-pro", "googleai/gemini-2.5-flash"]},
//	    "jwt:https://issuer.example.com|user-42": {"tokenBudget": 0}
//	  }
//	}

// callerSettings is what the callers file sets for one caller; a field left out keeps
// the server's setting.
type callerSettings struct {
	// TokenBudget is the caller's tokens per --token-window (0: no budget).
	TokenBudget *int64 `json:"tokenBudget"`
	// Model is the caller's default model: a name or a comma-separated fallback chain.
	Model string `json:"model"`
	// ModelsAllowed are the models the caller's requests may name.
	ModelsAllowed []string `json:"modelsAllowed"`

	chain   []string // Model, read
	allowed []string // ModelsAllowed, resolved
}

type callersFile struct {
	Callers map[string]*callerSettings `json:"callers"`
}

// callerSet is the callers file, read.
type callerSet struct {
	list     []string // sorted
	settings map[string]*callerSettings
}

// ids lists the callers the file names, sorted.
func (s *callerSet) ids() []string {
	if s == nil {
		return nil
	}
	return s.list
}

// get returns the settings of caller id (nil when the file does not name it).
func (s *callerSet) get(id string) *callerSettings {
	if s == nil {
		return nil
	}
	return s.settings[id]
}

// checkCallers reads the callers file, checking each caller's settings.
func (c *checker) checkCallers(cfg *config, getenv func(string) string) *callerSet {
	if !c.readableFile("callers-file", cfg.callersFile) {
		return nil
	}
	b, err := os.ReadFile(cfg.callersFile)
	if err != nil {
		c.failf("callers-file", "cannot read %q: %v", cfg.callersFile, err)
		return nil
	}
	set, errs := decodeCallers(b, getenv)
	for _, e := range errs {
		c.failf("callers-file", "%s", e)
	}
	return set
}

// decodeCallers reads a callers file; each error names the field.
func decodeCallers(b []byte, getenv func(string) string) (*callerSet, []string) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f callersFile
	if err := dec.Decode(&f); err != nil {
		return nil, []string{jsonProblem(b, err)}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, []string{"more than one JSON value; expected one object {\"callers\":{…}}"}
	}
	set := &callerSet{settings: map[string]*callerSettings{}}
	var errs []string
	for id, s := range f.Callers {
		field := "callers." + strconv.Quote(id)
		switch {
		case !strings.HasPrefix(id, "key:") && !strings.HasPrefix(id, "jwt:"):
			errs = append(errs, fmt.Sprintf("%s: not a caller's id; expected key:<API key name> or jwt:<iss>|<sub>", field))
			continue
		case s == nil:
			errs = append(errs, fmt.Sprintf("%s: expected an object {\"tokenBudget\",\"model\",\"modelsAllowed\"}", field))
			continue
		}
		if s.TokenBudget != nil && *s.TokenBudget < 0 {
			errs = append(errs, fmt.Sprintf("%s.tokenBudget: got %d; expected 0 (no budget) or more tokens", field, *s.TokenBudget))
		}
		if s.Model != "" {
			chain, err := models.ParseChain(s.Model)
			if err != nil {
				errs = append(errs, fmt.Sprintf("%s.model: %v", field, err))
			}
			for _, name := range chain {
				if err := models.Check(name, getenv); err != nil {
					errs = append(errs, fmt.Sprintf("%s.model: %v", field, err))
				}
			}
			s.chain = chain
		}
		for i, raw := range s.ModelsAllowed {
			name := strings.TrimSpace(raw)
			f := field + ".modelsAllowed[" + strconv.Itoa(i) + "]"
			if name == "" || strings.Contains(name, ",") {
				errs = append(errs, fmt.Sprintf("%s: %q is not a model's name; expected one name such as googleai/gemini-2.5-flash", f, raw))
				continue
			}
			name = models.Resolve(name)
			if err := models.Check(name, getenv); err != nil {
				errs = append(errs, fmt.Sprintf("%s: %v", f, err))
			}
			s.allowed = append(s.allowed, name)
		}
		set.settings[id] = s
		set.list = append(set.list, id)
	}
	slices.Sort(set.list)
	slices.Sort(errs)
	return set, errs
}

// jsonProblem says where and why b is not the JSON expected.
func jsonProblem(b []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "not JSON: it ends before the object does"
	case errors.As(err, &se):
		line := 1 + bytes.Count(b[:min(int(se.Offset), len(b))], []byte("\n"))
		return fmt.Sprintf("not JSON at line %d: %v", line, se)
	case errors.As(err, &te):
		return fmt.Sprintf("%s: got a JSON %s; expected %s", te.Field, te.Value, jsonKind(te.Type.Kind().String()))
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func jsonKind(k string) string {
	switch k {
	case "int64", "int":
		return "a whole number"
	case "slice":
		return "a list"
	case "map", "struct", "ptr":
		return "an object"
	}
	return "a " + k
}
