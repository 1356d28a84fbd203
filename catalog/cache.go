package catalog

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Cache compiles catalogs once per content and hands out the shared compiled copy. It is
// safe for concurrent use.
type Cache struct {
	byInput  *lru.Cache[string, *Catalog] // by SHA-256 of the schema as given
	byHash   *lru.Cache[string, *Catalog] // by Catalog.Hash
	maxBytes int
}

// TooLargeError reports a catalog over the size limit.
type TooLargeError struct{ Size, Limit int }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("catalog is %d bytes as compact JSON; the limit is %d bytes", e.Size, e.Limit)
}

// NewCache returns a cache of at most size compiled catalogs, each at most maxBytes long as
// compact JSON (0: no limit).
func NewCache(size, maxBytes int) *Cache {
	byInput, _ := lru.New[string, *Catalog](max(size, 1))
	byHash, _ := lru.New[string, *Catalog](max(size, 1))
	return &Cache{byInput: byInput, byHash: byHash, maxBytes: maxBytes}
}

// Compile returns the compiled form of schema, compiling it only if no catalog with the
// same canonical JSON is cached.
func (cs *Cache) Compile(schema map[string]any) (*Catalog, error) {
	canonical, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	if cs.maxBytes > 0 && len(canonical) > cs.maxBytes {
		return nil, &TooLargeError{Size: len(canonical), Limit: cs.maxBytes}
	}
	sum := sha256.Sum256(canonical)
	key := string(sum[:])
	if c, ok := cs.byInput.Get(key); ok {
		return c, nil
	}
	c, err := Compile(schema)
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
func (cs *Cache) Lookup(hash string) (*Catalog, bool) {
	return cs.byHash.Get(hash)
}
