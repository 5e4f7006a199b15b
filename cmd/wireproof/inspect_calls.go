package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

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
	// Columns as wide as their longest cell, so a long id (a provider's
	// "init-<uuid>", a tool_use id) or connection does not push the rest of
	// its line out of line.
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	for _, c := range tl.Calls {
		end := "open"
		if c.Ended {
			end = fmt.Sprintf("@%d", c.EndSeq)
		}
		line := fmt.Sprintf("%s\tid %s\t%s\t@%d..%s\t%s", cell(c.Conn), cell(c.ID), cell(c.Method), c.StartSeq, end, c.Outcome)
		switch {
		case c.AcksChunks() && (c.Chunks > 0 || c.Acks > 0):
			line += fmt.Sprintf("  chunks %d acks %d", c.Chunks, c.Acks) // Effect RPC streams are acknowledged chunk by chunk
		case c.Chunks > 0:
			line += fmt.Sprintf("  chunks %d", c.Chunks) // no other protocol acknowledges its chunks
		}
		if c.Reason != "" {
			line += "  (" + c.Reason + ")"
		}
		fmt.Fprintln(tw, line)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(tl.RPCErrors) > 0 {
		fmt.Fprintf(out, "%d message(s) outside any call or undecodable\n", len(tl.RPCErrors))
		for _, e := range tl.RPCErrors {
			fmt.Fprintf(out, "@%d %s %s\n", e.Seq, e.Conn, e.Summary)
		}
	}
	return nil
}

// cell is a value as one column of the calls table: a tab or newline in it
// (a decoded id or method can hold anything) would break the columns.
func cell(s string) string {
	return strings.NewReplacer("\t", `\t`, "\n", `\n`, "\r", `\r`).Replace(s)
}
