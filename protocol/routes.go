package protocol

import "github.com/wireproof/wireproof/bundle"

// JSONRPCRoutes route stdio lines and WebSocket connections that carry
// JSON-RPC 2.0 to d: a stdio connection whose first line has the shape of a
// JSON-RPC message, a WebSocket whose first message is plain JSON-RPC 2.0
// (not Effect RPC's JSON-RPC serialization).
func JSONRPCRoutes(d *JSONRPCDecoder) []Route {
	return []Route{
		{Protocol: JSONRPC, Decoder: d, Match: func(open, first *bundle.Event) bool {
			return first != nil && first.Kind == bundle.KindStdioLine && LooksLikeJSONRPC(first.Body.Data)
		}},
		{Protocol: JSONRPC, Decoder: d, Match: func(open, first *bundle.Event) bool {
			return first != nil && first.Kind == bundle.KindWSMessage && isJSONRPCFrame(first.Body.Data)
		}},
	}
}

// HTTPRoute routes every HTTP exchange to d.
func HTTPRoute(d *HTTPDecoder) Route {
	return Route{Protocol: HTTP, Decoder: d, Match: func(open, first *bundle.Event) bool {
		return open != nil && open.Kind == bundle.KindHTTPRequest
	}}
}
