package retryafter

import (
	"testing"
	"time"
)

func TestSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int{
		-time.Second: 0, 0: 0, time.Nanosecond: 1, 999 * time.Millisecond: 1, time.Second: 1,
		time.Second + 1: 2, 2500 * time.Millisecond: 3, time.Hour: 3600,
	} {
		if got := Seconds(d); got != want {
			t.Errorf("Seconds(%v) = %d, want %d", d, got, want)
		}
	}
}
