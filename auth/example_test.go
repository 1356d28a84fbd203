package auth_test

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"

	"github.com/genuiserver/genui/auth"
)

func ExampleAuthenticator() {
	a, err := auth.New(auth.WithAPIKey("alice", "alice-0123456789-secret"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("enabled:", a.Enabled())

	r := httptest.NewRequest("POST", "/generateUi", nil)
	r.Header.Set("Authorization", "Bearer alice-0123456789-secret")
	c, err := a.Authenticate(r, false)
	fmt.Println(c.ID, c.Method, err)

	r = httptest.NewRequest("POST", "/generateUi", nil)
	_, err = a.Authenticate(r, false)
	fmt.Println(errors.Is(err, auth.ErrNoCredentials))

	r = httptest.NewRequest("POST", "/generateUi", nil)
	r.Header.Set("X-API-Key", "guessed-0123456789-key")
	_, err = a.Authenticate(r, false)
	fmt.Println(errors.Is(err, auth.ErrBadCredentials), err)
	// Output:
	// enabled: true
	// key:alice api_key <nil>
	// true
	// true invalid credentials: unknown API key
}

func ExampleScope() {
	ctx := context.Background()
	fmt.Println(auth.Scope(ctx, "session-1"))

	ctx = auth.NewContext(ctx, auth.Caller{ID: "key:alice", Method: auth.MethodAPIKey})
	fmt.Println(auth.Scope(ctx, "session-1"))
	fmt.Println(auth.FromContext(ctx).Key())
	// Output:
	// session-1
	// zll6xG1DDxaI6uP3~session-1
	// zll6xG1DDxaI6uP3
}
