package main

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/redistest"
	"github.com/genuiserver/genui/schemas"
)

// Three replicas on a Redis Cluster, one caller at 5 turns a second (burst 5): across
// the replicas the caller gets its rate, not three times it, and each refusal says when
// to retry. Its running turns are one count too.
func TestLimitsSharedByReplicas(t *testing.T) {
	rdb := redistest.StartCluster(t, 3, 1)
	fake := fakegemini.New()
	defer fake.Close()
	args := []string{"--api-keys-file", keysFile(t), "--rate-limit", "5", "--rate-burst", "5"}
	replicas := []*replica{startReplica(t, fake, rdb, args...), startReplica(t, fake, rdb, args...), startReplica(t, fake, rdb, args...)}
	catalog, _ := schemas.SampleCatalog("basic")
	body := `{"catalog":` + mustMarshal(catalog) + `,"conversation":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}`

	var mu sync.Mutex
	var admitted, refused int
	var wg sync.WaitGroup
	start := time.Now()
	for i := range 45 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, h, got := postJSON(t, replicas[i%3].base+"/generateUi", as(aliceKey), body)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case status == 200:
				admitted++
			case status == 429 && h.Get("Retry-After") != "" && strings.Contains(got, `"limit":"rate"`):
				refused++
				if s, err := strconv.Atoi(h.Get("Retry-After")); err != nil || s < 1 {
					t.Errorf("Retry-After %q", h.Get("Retry-After"))
				}
			default:
				t.Errorf("%d %v %s", status, h, got)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	// The burst, plus what the rate refilled while the requests ran.
	allowed := 5 + int(elapsed.Seconds()*5)
	if admitted > allowed || admitted < 5 || admitted+refused != 45 {
		t.Fatalf("%d admitted and %d refused in %v across three replicas; at most %d may be", admitted, refused, elapsed, allowed)
	}
	t.Logf("%d of 45 turns admitted in %v across three replicas (rate 5/s, burst 5)", admitted, elapsed)
}
