package triage

import (
	"cmp"
	"slices"
	"strings"

	"github.com/wireproof/wireproof/internal/filter"
	"github.com/wireproof/wireproof/replay"
)

// Flag is one thing in a bundle that went wrong, whichever check it
// decides: a non-zero exit, a stderr line, a 4xx/5xx answer, a failed or
// unanswered call, an undecodable message or protocol violation, the event a
// failing check was decided at. The kinds are filter's (filter.Flag*), so
// inspect's `~flag`, the report and the viewer name them alike.
type Flag struct {
	Seq  uint64 `json:"seq"`
	T    int64  `json:"t"`
	Kind string `json:"kind"`
	Conn string `json:"conn,omitempty"`
	What string `json:"what"`
}

// flag notes one flag; the builder sorts them by seq at the end.
func (b *builder) flag(seq uint64, t int64, kind, conn, what string) {
	b.tl.Flags = append(b.tl.Flags, Flag{Seq: seq, T: t, Kind: kind, Conn: conn, What: clipLine(what, b.maxSummary)})
}

// finishFlags adds the flags known only once the bundle is read (calls that
// ended badly, decode errors, failed checks) and orders them all by seq.
func (b *builder) finishFlags() {
	tl := b.tl
	for _, c := range tl.Calls {
		k := filter.CallFlag(string(c.Outcome), onlyInterrupts(c.Cause))
		if k == "" {
			continue
		}
		seq, t := c.EndSeq, c.EndT
		if !c.Ended || seq == 0 {
			seq, t = c.StartSeq, c.StartT
		}
		what := c.Method + " #" + c.ID + " " + string(c.Outcome)
		if c.Reason != "" {
			what += ": " + c.Reason
		} else if c.Cause != "" {
			what += ": " + c.Cause
		}
		b.flag(seq, t, k, c.Conn, what)
	}
	for _, e := range tl.RPCErrors {
		b.flag(e.Seq, e.T, filter.FlagDecode, e.Conn, e.Summary)
	}
	tl.Flags = append(tl.Flags, CheckFlags(tl.Replayed)...)
	slices.SortStableFunc(tl.Flags, func(a, b Flag) int { return cmp.Compare(a.Seq, b.Seq) })
	tl.flagsAt = map[uint64][]string{}
	for _, f := range tl.Flags {
		if !slices.Contains(tl.flagsAt[f.Seq], f.Kind) {
			tl.flagsAt[f.Seq] = append(tl.flagsAt[f.Seq], f.Kind)
		}
	}
}

// FlagsAt are the kinds of the flags at seq.
func (tl *Timeline) FlagsAt(seq uint64) []string { return tl.flagsAt[seq] }

// CallsAt are the calls whose messages the event at seq carried.
func (tl *Timeline) CallsAt(seq uint64) []*RPCCall { return tl.callsAt[seq] }

// noteCall records that the event at seq carried a message of rc.
func (b *builder) noteCall(seq uint64, rc *RPCCall) {
	if b.tl.callsAt == nil {
		b.tl.callsAt = map[uint64][]*RPCCall{}
	}
	if !slices.Contains(b.tl.callsAt[seq], rc) {
		b.tl.callsAt[seq] = append(b.tl.callsAt[seq], rc)
	}
}

// CheckFlags are the conformance flags of a replay: the event each failing
// suite's check was decided at.
func CheckFlags(res *replay.Result) []Flag {
	if res == nil {
		return nil
	}
	var out []Flag
	seen := map[uint64]bool{}
	for _, s := range res.Verdict.Suites {
		if f := s.Failure; f != nil && !seen[f.Seq] {
			seen[f.Seq] = true
			out = append(out, Flag{Seq: f.Seq, T: f.T, Kind: filter.FlagConformance, What: s.Suite + ": " + f.Check + ": " + f.Message})
		}
	}
	if f := res.Verdict.Failure; f != nil && !seen[f.Seq] {
		out = append(out, Flag{Seq: f.Seq, T: f.T, Kind: filter.FlagConformance, What: f.Check + ": " + f.Message})
	}
	return out
}

// onlyInterrupts: a cause (causeText) that holds interruptions and nothing else.
func onlyInterrupts(cause string) bool {
	if cause == "" {
		return false
	}
	for _, l := range strings.Split(cause, "\n") {
		if !strings.HasPrefix(l, "Interrupt") {
			return false
		}
	}
	return true
}
