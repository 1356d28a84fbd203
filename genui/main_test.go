package genui_test

import (
	"testing"

	"github.com/genuiserver/genui/internal/testkit/leaktest"
)

// No turn, stream or held conversation outlives its test.
func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }
