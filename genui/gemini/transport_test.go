package gemini

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"testing"
)

func TestSplice(t *testing.T) {
	s := &splices{system: [][]byte{[]byte(`{"parts":[{"text":`), []byte(`"S"`), []byte(`}]}`)}, tools: [][]byte{[]byte(`[{"functionDeclarations":[]}]`)}}
	// Keys come sorted from the genai client, but the order does not matter.
	for _, body := range []string{
		`{"contents":[],"systemInstruction":` + string(systemPlaceholder) + `,"tools":` + string(toolsPlaceholder) + "}\n",
		`{"tools":` + string(toolsPlaceholder) + `,"contents":[],"systemInstruction":` + string(systemPlaceholder) + "}\n",
	} {
		parts, n, err := splice([]byte(body), s)
		if err != nil {
			t.Fatal(err)
		}
		bufs := net.Buffers(parts)
		got, _ := io.ReadAll(&bufs)
		if len(got) != n {
			t.Fatalf("length %d, counted %d", len(got), n)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(got, &m); err != nil {
			t.Fatalf("%s: %v", got, err)
		}
		if !bytes.Equal(m["systemInstruction"], bytes.Join(s.system, nil)) || !bytes.Equal(m["tools"], bytes.Join(s.tools, nil)) {
			t.Fatalf("%s", got)
		}
	}
	// A user text equal to a placeholder does not match: the marker holds the key.
	body := `{"contents":[{"parts":[{"text":` + string(systemPlaceholder) + `}]}],"tools":` + string(toolsPlaceholder) + `}`
	if _, _, err := splice([]byte(body), s); err == nil {
		t.Fatal("a placeholder without its key was taken")
	}
	twice := `{"systemInstruction":` + string(systemPlaceholder) + `,"x":{"systemInstruction":` + string(systemPlaceholder) + `},"tools":` + string(toolsPlaceholder) + `}`
	if _, _, err := splice([]byte(twice), s); err == nil {
		t.Fatal("a placeholder present twice was taken")
	}
}
