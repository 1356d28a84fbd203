package session

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/genuiserver/genui/tools"
)

// Catalogs compiles catalogs once per content and hands out the shared compiled copy.
type Catalogs struct {
	byHash   *lru.Cache[string, *tools.Catalog]
	maxBytes int
}

// TooLargeError reports a catalog over the size limit.
type TooLargeError struct{ Size, Limit int }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("catalog is %d bytes as compact JSON; the limit is %d bytes", e.Size, e.Limit)
}

// NewCatalogs returns a cache of at most size compiled catalogs, each at most maxBytes
// long as compact JSON (0: no limit).
func NewCatalogs(size, maxBytes int) *Catalogs {
	c, _ := lru.New[string, *tools.Catalog](max(size, 1))
	return &Catalogs{byHash: c, maxBytes: maxBytes}
}

// Compile returns the compiled form of schema, compiling it only if no catalog with the
// same canonical JSON is cached.
func (cs *Catalogs) Compile(schema map[string]any) (*tools.Catalog, error) {
	canonical, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	if cs.maxBytes > 0 && len(canonical) > cs.maxBytes {
		return nil, &TooLargeError{Size: len(canonical), Limit: cs.maxBytes}
	}
	key := string(sha256sum(canonical))
	if c, ok := cs.byHash.Get(key); ok {
		return c, nil
	}
	c, err := tools.Compile(schema)
	if err != nil {
		return nil, err
	}
	cs.byHash.Add(key, c)
	return c, nil
}

func sha256sum(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}
