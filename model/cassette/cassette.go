package cassette

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wireproof/wireproof/playback"
)

// Call is one recorded model exchange.
type Call struct {
	Bundle string // the bundle's path
	Conn   string // its connection, "model-h3"
	Seq    uint64 // the request's seq in the bundle
	Shape  *Shape
	// Exchange is the recorded exchange: the request, the status, headers
	// and body chunks with their times.
	Exchange *playback.Exchange
}

// Name is the call as a person finds it: "idle-1.zst model-h3 (seq 120)".
func (c *Call) Name() string {
	return fmt.Sprintf("%s %s (seq %d)", filepath.Base(c.Bundle), c.Conn, c.Seq)
}

// Cassette is the recorded model calls of one or more bundles, in the
// order given and recorded.
type Cassette struct {
	Calls []*Call
}

// Load reads the model calls of the bundles at paths; a directory stands
// for the bundles (*.zst) in it, in name order. It fails for a path that
// cannot be read and for a cassette with no model call.
func Load(ctx context.Context, paths ...string) (*Cassette, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("cassette: %w", err)
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		found, err := filepath.Glob(filepath.Join(p, "*.zst"))
		if err != nil {
			return nil, fmt.Errorf("cassette: %w", err)
		}
		slices.Sort(found)
		if len(found) == 0 {
			return nil, fmt.Errorf("cassette: no bundle (*.zst) in directory %s", p)
		}
		files = append(files, found...)
	}
	c := &Cassette{}
	for _, f := range files {
		rec, err := playback.Load(ctx, f)
		if err != nil {
			return nil, fmt.Errorf("cassette: %s: %w", f, err)
		}
		for _, x := range rec.Exchanges {
			path := x.URL.Path
			if x.Method != "POST" || (path != "/v1/messages" && path != "/v1/messages/count_tokens" && path != ResponsesPath) {
				continue
			}
			sh, err := ParseShape(path, x.Body)
			if err != nil {
				continue // a request recorded cut or not a model request: nothing to match
			}
			c.Calls = append(c.Calls, &Call{Bundle: f, Conn: x.ID, Seq: x.Seq, Shape: sh, Exchange: x})
		}
	}
	if len(c.Calls) == 0 {
		return nil, fmt.Errorf("cassette: no model call (POST /v1/messages or /v1/responses) in %s", strings.Join(files, ", "))
	}
	return c, nil
}
