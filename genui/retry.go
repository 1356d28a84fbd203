package genui

import (
	"math/rand/v2"
	"strings"
	"time"

	"google.golang.org/genai"
)

// retryPolicy bounds the retries of a model call that failed before streaming anything.
type retryPolicy struct {
	retries int
	maxWait time.Duration
	base    time.Duration
}

// next returns how long to wait before retrying after attempt (0-based) failed with e,
// and whether to retry at all.
func (p retryPolicy) next(attempt int, e *Error, waited time.Duration) (time.Duration, bool) {
	if attempt >= p.retries || (e.Status != StatusResourceExhausted && e.Status != StatusUnavailable) {
		return 0, false
	}
	d := p.base << attempt
	d = d/2 + rand.N(d/2+1) // jitter
	if api, ok := e.cause.(genai.APIError); ok {
		if rd := retryDelay(api); rd > 0 {
			d = rd
		}
	}
	if waited+d > p.maxWait {
		return 0, false
	}
	return d, true
}

// retryDelay reads the google.rpc.RetryInfo detail of a Gemini error ("retryDelay": "2s").
func retryDelay(api genai.APIError) time.Duration {
	for _, d := range api.Details {
		if t, _ := d["@type"].(string); !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		if s, ok := d["retryDelay"].(string); ok {
			if v, err := time.ParseDuration(s); err == nil {
				return v
			}
		}
	}
	return 0
}
