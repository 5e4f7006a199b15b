// Package bundleindex summarizes bundles into index entries, one NDJSON line
// per bundle (what was run, the verdict the live run recorded, sizes and
// timing), and computes pass, fail and flake figures over them. Standard
// engines (DuckDB's read_json_auto, jq) query the index file directly.
package bundleindex

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
)

// Statuses of an Entry beyond the verdict's own (passed, failed, skipped).
const (
	// StatusIncomplete: the bundle holds no verdict (the run was killed or
	// the recording is not a verification run).
	StatusIncomplete assert.Status = "incomplete"
	// StatusUnreadable: the bundle could not be read.
	StatusUnreadable = assert.StatusUnreadable
	// StatusDamaged: the bundle's stored bytes are not what its writer
	// wrote (*bundle.DamagedError); its verdict, if any, is not counted.
	StatusDamaged = assert.StatusDamaged
)

// Entry is one line of the index. Field names are stable: queries use them.
// Every line carries every field (false, 0, "" or null, never absent), so a
// query such as DuckDB's `WHERE truncated` binds on a corpus where no bundle
// is truncated.
type Entry struct {
	Path      string            `json:"path"`
	Scenario  string            `json:"scenario"`
	Iteration int               `json:"iteration"`
	Provider  string            `json:"provider"`
	Model     string            `json:"model"`
	Revision  string            `json:"revision"`
	Dirty     bool              `json:"dirty"`
	Tool      string            `json:"tool"`
	Started   *time.Time        `json:"started"`
	Options   map[string]string `json:"options"`
	// Fault is the fault mode the run injected on purpose (the manifest's
	// `fault` option: verify --fault), "" for none. A fault-injected run
	// is expected to fail: Stats does not count it as a run of its
	// scenario, so it makes no scenario flaky.
	Fault string `json:"fault"`
	// Status is the recorded verdict's status (passed, failed, skipped,
	// not-applicable),
	// or incomplete or unreadable.
	Status assert.Status `json:"status"`
	// Check, Seq and Message are the first failing check, the event that
	// decided it and its message.
	Check   string `json:"check"`
	Seq     uint64 `json:"seq"`
	Message string `json:"message"`
	// Events counts the event lines (the header included); DurationMs is the
	// time of the last one since the recording started.
	Events     uint64  `json:"events"`
	DurationMs float64 `json:"durationMs"`
	// Bytes is the uncompressed size of the events read, Size the stored
	// (compressed) size of the bundle.
	Bytes     int64  `json:"bytes"`
	Size      int64  `json:"size"`
	Truncated bool   `json:"truncated"`
	Digest    string `json:"digest"`
	Error     string `json:"error"`
}

// errorStatus is the status of a bundle that could not be read: damaged or
// unreadable.
func errorStatus(err error) assert.Status {
	var de *bundle.DamagedError
	if errors.As(err, &de) {
		return StatusDamaged
	}
	return StatusUnreadable
}

// Summarize reads a bundle as a stream and returns its entry. Payloads other
// than the verdict's are not decoded. A bundle that cannot be read is an
// entry with Status unreadable and the reason in Error, not an error; the
// error is only the context's.
func Summarize(ctx context.Context, name string, in io.Reader, size int64) (Entry, error) {
	e := Entry{Path: name, Size: size, Status: StatusIncomplete}
	r, err := bundle.NewReader(in, &bundle.ReaderOptions{Name: name, SkipBody: func(k bundle.Kind) bool { return k != bundle.KindVerdict }})
	if err != nil {
		e.Status, e.Error = errorStatus(err), err.Error()
		return e, nil
	}
	defer r.Close()
	h := r.Header()
	m := h.Manifest
	e.Scenario, e.Provider, e.Model, e.Revision, e.Dirty, e.Tool = m.Scenario, m.Provider, m.Model, m.Revision, m.Dirty, h.Tool
	e.Options = m.Options
	e.Fault = m.Options["fault"]
	if n, err := strconv.Atoi(m.Options["iteration"]); err == nil {
		e.Iteration = n
	}
	if !h.Started.IsZero() {
		t := h.Started.UTC()
		e.Started = &t
	}
	e.Events, e.Bytes = 1, int64(len(r.Line()))+1
	var verdict *assert.Verdict
	for ev, err := range r.Events(ctx) {
		if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return e, err
		}
		if err != nil {
			e.Status, e.Error = errorStatus(err), err.Error()
			return e, nil
		}
		e.Events++
		e.Bytes += int64(len(r.Line())) + 1
		e.DurationMs = float64(ev.T) / 1e6
		if ev.Kind == bundle.KindVerdict && verdict == nil {
			var v assert.Verdict
			if json.Unmarshal(ev.Body.Data, &v) == nil && v.Status != "" {
				verdict = &v
			}
		}
	}
	e.Truncated = r.Truncated()
	e.Digest = r.Digest()
	if verdict != nil {
		e.Status = verdict.Status
		if verdict.Scenario != "" {
			e.Scenario = string(verdict.Scenario)
		}
		if f := verdict.Failure; f != nil {
			e.Check, e.Seq, e.Message = f.Check, f.Seq, f.Message
		}
	}
	return e, nil
}
