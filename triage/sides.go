package triage

import (
	"strings"

	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/protocol"
)

// The lanes of the report's timeline beyond Lanes: one per side of a run.
// Each process (the server, each provider process) has its own lane, named
// by its connection; the HTTP connections that carry MCP (JSON-RPC over
// HTTP) or model API calls (Anthropic Messages) have theirs.
const (
	SideMCP   = "mcp"
	SideModel = "model"
)

// noteSide records what protocol an HTTP connection's calls speak, for its
// lane.
func (b *builder) noteSide(pe *protocol.Event) {
	if !strings.HasPrefix(string(b.cur.Kind), "http.") || pe.Conn == "" {
		return
	}
	side := ""
	switch pe.Protocol {
	case protocol.JSONRPC:
		side = SideMCP
	case protocol.Anthropic, protocol.OpenAI:
		side = SideModel
	default:
		return
	}
	if b.tl.sides == nil {
		b.tl.sides = map[string]string{}
	}
	b.tl.sides[pe.Conn] = side
}

// SideLanes are the lanes of tl's timeline, one per side, in order: each
// process, the client's HTTP, MCP, the model API, then the WebSocket, gate,
// marks and run lanes. Lanes no event is on are left out, but for the
// fixed ones.
func (tl *Timeline) SideLanes() []string {
	var procs []string
	seen := map[string]bool{}
	mcp, model := false, false
	for _, e := range tl.Entries {
		l := tl.SideOf(e)
		switch {
		case l == SideMCP:
			mcp = true
		case l == SideModel:
			model = true
		case e.Lane == LaneServer && !seen[l]:
			seen[l] = true
			procs = append(procs, l)
		}
	}
	if !seen[string(LaneServer)] {
		procs = append([]string{string(LaneServer)}, procs...)
	}
	out := append([]string{}, procs...)
	out = append(out, string(LaneHTTP))
	if mcp {
		out = append(out, SideMCP)
	}
	if model {
		out = append(out, SideModel)
	}
	for _, l := range []Lane{LaneWS, LaneGate, LaneMarks, LaneRun} {
		out = append(out, string(l))
	}
	return out
}

// SideOf is the lane of e among SideLanes: a process's events on its own
// (the server's under "server"), an HTTP exchange's on the lane of what its
// calls speak.
func (tl *Timeline) SideOf(e Entry) string {
	switch e.Lane {
	case LaneServer:
		if e.Conn == "" || e.Conn == string(LaneServer) || e.Kind == bundle.KindHeader {
			return string(LaneServer)
		}
		return e.Conn
	case LaneHTTP:
		if s := tl.sides[e.Conn]; s != "" {
			return s
		}
	}
	return string(e.Lane)
}
