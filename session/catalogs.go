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
	byInput  *lru.Cache[string, *tools.Catalog] // by SHA-256 of the schema as given
	byHash   *lru.Cache[string, *tools.Catalog] // by tools.Catalog.Hash
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
	byInput, _ := lru.New[string, *tools.Catalog](max(size, 1))
	byHash, _ := lru.New[string, *tools.Catalog](max(size, 1))
	return &Catalogs{byInput: byInput, byHash: byHash, maxBytes: maxBytes}
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
	if c, ok := cs.byInput.Get(key); ok {
		return c, nil
	}
	c, err := tools.Compile(schema)
	if err != nil {
		return nil, err
	}
	// Different inputs (a bare widget schema and its normalized form) may compile to the
	// same catalog: share the copy already held.
	if prev, ok := cs.byHash.Get(c.Hash); ok {
		c = prev
	} else {
		cs.byHash.Add(c.Hash, c)
	}
	cs.byInput.Add(key, c)
	return c, nil
}

// Lookup returns the cached compiled catalog whose Hash is hash.
func (cs *Catalogs) Lookup(hash string) (*tools.Catalog, bool) {
	return cs.byHash.Get(hash)
}

func sha256sum(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}
