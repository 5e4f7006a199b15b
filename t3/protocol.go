// Package t3 is the contract of the T3 Code orchestration protocol as wireproof
// uses it: constants, typed views of projections and stream items, and a
// small HTTP and Effect RPC client (the messages are protocol/effectrpc's, the
// one wire model the fixture server, playback and replay share). Each type
// documents its part of the wire contract; docs/interop.md
// ("Interoperability with a real Effect client") says how the contract is
// checked against Effect's own client.
package t3

// Protocol constants of orchestration protocol version 2.
const (
	ProtocolVersion     = 2
	ProtocolHeader      = "x-t3-orchestration-protocol"
	ProtocolQueryParam  = "orchestrationProtocol"
	TicketQueryParam    = "wsTicket"
	ReadyLogLine        = "startup phase: complete"
	BootstrapTokenType  = "urn:t3:params:oauth:token-type:environment-bootstrap"
	TokenExchangeGrant  = "urn:ietf:params:oauth:grant-type:token-exchange"
	AccessTokenType     = "urn:ietf:params:oauth:token-type:access_token"
	MethodLaunchThread  = "orchestration.launchThread"
	MethodSubscribe     = "orchestration.subscribeThread"
	MethodGetProjection = "orchestration.getThreadProjection"
	PathToken           = "/oauth/token"
	PathProjectsMutate  = "/api/projects/mutate"
	PathWebSocketTicket = "/api/auth/websocket-ticket"
	PathThreadsPrefix   = "/api/orchestration/threads/"
	PathWebSocket       = "/ws"
)

// TokenFields are the query parameters, form fields and JSON fields whose
// values are credentials in T3 traffic, the whole set a recording of it
// redacts: the OAuth token exchange's (access_token, refresh_token,
// id_token, subject_token, token: redact.DefaultTokenFields, which a test
// holds this list to contain), the WebSocket ticket (its JSON "ticket" and
// the wsTicket query parameter) and the bootstrap object's
// desktopBootstrapToken. A recorder of T3 traffic learns each value as a
// secret (record.Options.TokenFields).
var TokenFields = []string{
	"access_token", "refresh_token", "id_token", "subject_token", TicketQueryParam, "ticket",
	"token", "desktopBootstrapToken",
}

// Bootstrap is the JSON object a server reads from its bootstrap file descriptor.
type Bootstrap struct {
	Mode                  string `json:"mode"`
	NoBrowser             bool   `json:"noBrowser"`
	Port                  int    `json:"port"`
	T3Home                string `json:"t3Home"`
	Host                  string `json:"host"`
	DesktopBootstrapToken string `json:"desktopBootstrapToken"`
	TailscaleServeEnabled bool   `json:"tailscaleServeEnabled"`
	TailscaleServePort    int    `json:"tailscaleServePort"`
	// Fault is understood by wireproof's fixture server only: it selects a fault
	// mode, as the --fault flag does.
	Fault string `json:"fault,omitempty"`
	// Serialization is understood by wireproof's fixture server only: it
	// selects the Effect RPC serialization ("json" or "ndjson"), as the
	// --serialization flag does. A real server has it in its configuration.
	Serialization string `json:"serialization,omitempty"`
}
