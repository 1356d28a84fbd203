package models

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/openai/openai-go"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/providererr"
)

// compatModel is a model of an OpenAI-compatible endpoint, served by Genkit's compat_oai
// plugin, whose failures it reports as the Gemini adapter does: the provider's status
// with its meaning (a 429 RESOURCE_EXHAUSTED with the wait the provider asked for, a 5xx
// UNAVAILABLE, so that a fallback chain passes the call on), and never the endpoint's
// address, which stays in the cause for the log.
type compatModel struct{ genui.Model }

func (m compatModel) Generate(ctx context.Context, req *genui.ModelRequest, onPart func(context.Context, *ai.Part) error) (*ai.ModelResponse, error) {
	resp, err := m.Model.Generate(ctx, req, onPart)
	if err != nil && ctx.Err() == nil {
		return nil, compatError(err)
	}
	return resp, err
}

// compatError maps a failure of the OpenAI SDK: an answer of the endpoint by its HTTP
// status and Retry-After, a request that could not be sent as UNAVAILABLE.
func compatError(err error) error {
	var api *openai.Error
	if errors.As(err, &api) {
		code := api.StatusCode
		msg := api.Message
		if msg == "" {
			msg = http.StatusText(code)
		}
		e := (&genui.Error{Status: providererr.Status(code), Message: fmt.Sprintf("model error (HTTP %d %s): %s", code, http.StatusText(code), msg)}).WithCause(err)
		if api.Response != nil {
			e.RetryAfter = providererr.RetryAfter(api.Response.Header, time.Now())
		}
		return e
	}
	var ue *url.Error
	var ne net.Error
	if errors.As(err, &ue) || errors.As(err, &ne) {
		return (&genui.Error{Status: genui.StatusUnavailable, Message: "the model could not be reached (" + providererr.Unreachable(err) + "); try again"}).WithCause(err)
	}
	return err
}
