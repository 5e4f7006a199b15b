package main

import (
	"context"
	"fmt"
	"io"

	"github.com/wireproof/wireproof/triage"
)

// inspectCalls prints the RPC calls of a bundle, correlated by request id
// (every call the replay engine's decoders rebuild: Effect RPC, JSON-RPC 2.0,
// stream-json), one line each, then the messages that belong to no call or
// break their protocol's rules.
func inspectCalls(ctx context.Context, path string, out io.Writer) error {
	r, err := openBundle(path, false)
	if err != nil {
		return err
	}
	defer r.Close()
	tl, err := triage.Read(ctx, r, nil)
	if err != nil {
		return unreadableError{err}
	}
	fmt.Fprintf(out, "%d call(s)\n", len(tl.Calls))
	for _, c := range tl.Calls {
		end := "open"
		if c.Ended {
			end = fmt.Sprintf("@%d", c.EndSeq)
		}
		line := fmt.Sprintf("%-8s id %-6s %-40s @%d..%s  %s", c.Conn, c.ID, c.Method, c.StartSeq, end, c.Outcome)
		if c.Chunks > 0 || c.Acks > 0 {
			line += fmt.Sprintf("  chunks %d acks %d", c.Chunks, c.Acks)
		}
		if c.Reason != "" {
			line += "  (" + c.Reason + ")"
		}
		fmt.Fprintln(out, line)
	}
	if len(tl.RPCErrors) > 0 {
		fmt.Fprintf(out, "%d message(s) outside any call or undecodable\n", len(tl.RPCErrors))
		for _, e := range tl.RPCErrors {
			fmt.Fprintf(out, "@%d %s %s\n", e.Seq, e.Conn, e.Summary)
		}
	}
	return nil
}
