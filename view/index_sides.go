package view

import (
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/triage"
)

// onProtocol is the replay Tap's hook for the protocol decoders' events:
// the calls of every decoder (onCall), and the side an HTTP exchange is on, MCP when
// it carries JSON-RPC (the waterfall's mcp lane, as the report's).
func (x *indexer) onProtocol(pe *protocol.Event) {
	x.onCall(pe)
	if pe.Protocol != protocol.JSONRPC {
		return
	}
	if i, ok := x.http[pe.Conn]; ok {
		x.ix.HTTP[i].Side = triage.SideMCP
	}
}
