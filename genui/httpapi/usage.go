package httpapi

import (
	"net/http"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/genui"
)

// usageAnswer is GET /usage's answer: the authenticated caller's own token usage in the
// current window of its budget.
type usageAnswer struct {
	Caller string `json:"caller"`
	Input  int64  `json:"input"`
	Output int64  `json:"output"`
	Total  int64  `json:"total"`
	// Budget is the caller's tokens per window; null when it has none.
	Budget  *int64 `json:"budget"`
	ResetAt string `json:"resetAt"`
}

// usage serves GET /usage: what the caller used of its token budget. Only an
// authenticated caller has one to see: the anonymous caller gets 401.
func (s *server) usage(c echo.Context) error {
	ctx := c.Request().Context()
	caller := auth.FromContext(ctx)
	if caller.ID == "" {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="genui"`)
		return &genui.Error{Status: genui.StatusUnauthenticated, Message: "credentials required: /usage answers an authenticated caller's own usage", Details: map[string]any{"field": "Authorization"}}
	}
	u, err := s.svc.Usage(ctx)
	if err != nil {
		return err
	}
	a := usageAnswer{Caller: caller.ID, Input: u.Input, Output: u.Output, Total: u.Total(), ResetAt: u.ResetAt.UTC().Format(time.RFC3339)}
	if u.Budget > 0 {
		a.Budget = &u.Budget
	}
	return c.JSON(http.StatusOK, a)
}

// modelsAnswer is GET /models's answer: the models the caller may name in a request's
// model field, its default first.
type modelsAnswer struct {
	Default string   `json:"default"`
	Models  []string `json:"models"`
}

// modelsOf serves GET /models: the models the caller may choose.
func (s *server) modelsOf(c echo.Context) error {
	names := s.svc.Models(c.Request().Context())
	return c.JSON(http.StatusOK, modelsAnswer{Default: names[0], Models: names})
}
