package playback

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Timing says how recorded gaps are reproduced. The zero Timing plays them
// as recorded.
type Timing struct {
	// Fast sends everything as soon as what caused it has happened: no
	// recorded gap is kept.
	Fast bool
	// Speed divides every recorded gap: 2 plays twice as fast, 0.5 half as
	// fast. 0 means 1.
	Speed float64
}

// ParseTiming reads "recorded", "fast" or "xN" (N a positive number: x2 is
// twice as fast as recorded, x0.5 half as fast).
func ParseTiming(s string) (Timing, error) {
	switch s {
	case "", "recorded":
		return Timing{}, nil
	case "fast":
		return Timing{Fast: true}, nil
	}
	if n, ok := strings.CutPrefix(s, "x"); ok {
		f, err := strconv.ParseFloat(n, 64)
		if err == nil && f > 0 && f < 1e9 {
			return Timing{Speed: f}, nil
		}
	}
	return Timing{}, fmt.Errorf("timing %q: want recorded, fast or xN with N a positive number (x2: twice as fast)", s)
}

func (t Timing) String() string {
	switch {
	case t.Fast:
		return "fast"
	case t.Speed == 0 || t.Speed == 1:
		return "recorded"
	}
	return "x" + strconv.FormatFloat(t.Speed, 'g', -1, 64)
}

// scale turns a recorded gap in nanoseconds into the gap to wait.
func (t Timing) scale(gap int64) time.Duration {
	if t.Fast || gap <= 0 {
		return 0
	}
	if t.Speed > 0 && t.Speed != 1 {
		return time.Duration(float64(gap) / t.Speed)
	}
	return time.Duration(gap)
}

// wait waits for the recorded gap (scaled) counted from since, or until ctx
// ends.
func (t Timing) wait(ctx context.Context, since time.Time, gap int64) error {
	d := t.scale(gap)
	if d <= 0 {
		return ctx.Err()
	}
	d -= time.Since(since)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
