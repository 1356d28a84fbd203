package catalog

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Cache compiles catalogs once per content and hands out the shared compiled copy. It keeps
// at most a number of catalogs and, by their estimated size (see [Catalog.Size]), at most a
// number of bytes; the least recently used go first. Other compiled values (the client
// tools of a request, see [Cache.Load]) share the same bounds. It is safe for concurrent
// use.
//
// A catalog is found by the SHA-256 of its JSON as sent, so a catalog seen before is not
// decoded again; catalogs sent differently (other spacing or key order) but equal share
// one compiled copy.
type Cache struct {
	maxJSON  int // longest catalog, as compact JSON
	maxBytes int

	mu    sync.Mutex
	lru   *lru.Cache[[32]byte, Sized]
	bytes int

	hits, misses atomic.Int64
}

// Sized is a compiled value a Cache holds: a *Catalog, or anything else with an estimate
// of the bytes it holds.
type Sized interface{ Size() int }

// TooLargeError reports a catalog over the size limit.
type TooLargeError struct{ Size, Limit int }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("catalog is %d bytes as compact JSON; the limit is %d bytes", e.Size, e.Limit)
}

// NewCache returns a cache of at most size compiled catalogs holding at most maxBytes
// (0: no byte bound), each catalog at most maxJSON bytes long as compact JSON (0: no
// limit).
func NewCache(size, maxJSON, maxBytes int) *Cache {
	cs := &Cache{maxJSON: maxJSON, maxBytes: maxBytes}
	cs.lru, _ = lru.NewWithEvict(max(size, 1), func(_ [32]byte, c Sized) { cs.bytes -= c.Size() })
	return cs
}

// Compile returns the compiled form of the catalog whose JSON is raw, compiling it only
// if no catalog with the same JSON, or the same canonical JSON, is cached.
func (cs *Cache) Compile(raw []byte) (*Catalog, error) { return cs.CompileAdmit(raw, nil) }

// CompileAdmit is Compile, calling admit, when not nil, before compiling a catalog the
// cache lacks: an error of admit is returned, and nothing is compiled or cached.
func (cs *Cache) CompileAdmit(raw []byte, admit func() error) (*Catalog, error) {
	key := sha256.Sum256(raw)
	if c, ok := cs.get(key); ok {
		if c, ok := c.(*Catalog); ok {
			cs.hits.Add(1)
			return c, nil
		}
	}
	cs.misses.Add(1)
	if admit != nil {
		if err := admit(); err != nil {
			return nil, err
		}
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, errors.New("catalog must be a JSON object")
	}
	var schema map[string]any
	if err := json.Unmarshal(raw, &schema); err != nil {
		return nil, fmt.Errorf("catalog is not valid JSON: %w", err)
	}
	if cs.maxJSON > 0 {
		canonical, err := json.Marshal(schema)
		if err != nil {
			return nil, err
		}
		if len(canonical) > cs.maxJSON {
			return nil, &TooLargeError{Size: len(canonical), Limit: cs.maxJSON}
		}
	}
	c, err := Compile(schema)
	if err != nil {
		return nil, err
	}
	// Other JSON of the same catalog (a bare widget schema and its normalized form, other
	// spacing) compiles to the same canonical JSON: share the copy already held.
	canonicalKey := sha256.Sum256(c.Canonical)
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if prev, ok := cs.lru.Get(canonicalKey); ok && isCatalog(prev) {
		c = prev.(*Catalog)
	} else {
		cs.addLocked(canonicalKey, c)
	}
	if key != canonicalKey {
		cs.addLocked(key, c)
	}
	return c, nil
}

func isCatalog(v Sized) bool {
	_, ok := v.(*Catalog)
	return ok
}

// Load returns the value cached under key, or compiles it with compile and caches it. key
// must not be the SHA-256 of a catalog's JSON: derive it from a prefix naming the kind of
// value. Errors are not cached.
func (cs *Cache) Load(key [32]byte, compile func() (Sized, error)) (Sized, error) {
	if v, ok := cs.get(key); ok {
		return v, nil
	}
	v, err := compile()
	if err != nil {
		return nil, err
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if prev, ok := cs.lru.Get(key); ok {
		return prev, nil
	}
	cs.addLocked(key, v)
	return v, nil
}

func (cs *Cache) get(key [32]byte) (Sized, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.lru.Get(key)
}

// addLocked adds a value, then drops the least recently used ones beyond the byte bound;
// cs.mu is held.
func (cs *Cache) addLocked(key [32]byte, c Sized) {
	if _, ok := cs.lru.Peek(key); ok {
		return
	}
	cs.bytes += c.Size()
	cs.lru.Add(key, c)
	for cs.maxBytes > 0 && cs.bytes > cs.maxBytes && cs.lru.Len() > 1 {
		cs.lru.RemoveOldest()
	}
}

// Lookup returns the cached compiled catalog whose Hash is hash.
func (cs *Cache) Lookup(hash string) (*Catalog, bool) {
	b, err := base64.RawURLEncoding.DecodeString(hash)
	if err != nil || len(b) != 32 {
		return nil, false
	}
	v, _ := cs.get([32]byte(b))
	c, ok := v.(*Catalog)
	return c, ok
}

// Counts returns how many lookups of Compile found their catalog compiled, and how many
// did not.
func (cs *Cache) Counts() (hits, misses int64) { return cs.hits.Load(), cs.misses.Load() }

// Len returns the number of values (catalogs and others) cached, and the bytes they are
// estimated to hold.
func (cs *Cache) Len() (int, int) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.lru.Len(), cs.bytes
}
