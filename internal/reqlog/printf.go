package reqlog

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// Printf routes the lines of a library that logs through a Printf(ctx, format, args…)
// method (go-redis's redis.SetLogger) into slog: each line goes to the logger Log returns
// when it is written (slog.Default when Log is nil), at Level, with the line's context,
// so that Handler adds the request id of a line logged on behalf of a request, and with a
// "lib" attribute naming the library. The line's trailing newlines and the library's own
// prefix are dropped.
type Printf struct {
	Lib    string              // the "lib" attribute, e.g. "go-redis"
	Prefix string              // the prefix the library puts on its lines, e.g. "redis: "
	Level  slog.Level          // the level of every line
	Log    func() *slog.Logger // nil: slog.Default
}

// Printf implements the library's logging interface.
func (p Printf) Printf(ctx context.Context, format string, args ...any) {
	log := slog.Default()
	if p.Log != nil {
		log = p.Log()
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if !log.Enabled(ctx, p.Level) {
		return
	}
	msg := strings.TrimRight(fmt.Sprintf(format, args...), "\r\n")
	if p.Prefix != "" {
		msg = strings.TrimPrefix(msg, p.Prefix)
	}
	if p.Lib != "" {
		log.Log(ctx, p.Level, msg, slog.String("lib", p.Lib))
		return
	}
	log.Log(ctx, p.Level, msg)
}
