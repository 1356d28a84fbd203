package script

// Split cuts s into at most n pieces of nearly equal length (at least one,
// "" for an empty s), never inside a UTF-8 sequence, and returns chunk of
// each piece, in order.
func Split[C any](s string, n int, chunk func(string) C) []C {
	rs := []rune(s)
	n = min(max(n, 1), max(len(rs), 1))
	out := make([]C, n)
	for i := range out {
		out[i] = chunk(string(rs[i*len(rs)/n : (i+1)*len(rs)/n]))
	}
	return out
}
