package claude

// Environment variables the scripted provider reads. They pass through the
// server that starts it (a real server hands its environment to the provider
// process), so `wireproof verify` can reach every provider process.
const (
	// EnvFault names a provider fault mode (below).
	EnvFault = "WIREPROOF_PROVIDER_FAULT"
	// EnvTap is the URL of the recorder's stdio tap endpoint: the provider
	// streams its argv and every stdin and stdout line there.
	EnvTap = "WIREPROOF_PROVIDER_TAP"
	// EnvMCPProxy is the recording proxy's origin (http://host:port); MCP
	// requests to EnvMCPUpstream's host:port go through it instead.
	EnvMCPProxy    = "WIREPROOF_PROVIDER_MCP_PROXY"
	EnvMCPUpstream = "WIREPROOF_PROVIDER_MCP_UPSTREAM"
)

// Provider fault modes: ways a provider process misbehaves on purpose.
const (
	// FaultGateFailurePropagated: the background work (a child, or native's
	// own background task) reports the gate as failed (curl exit 22, HTTP
	// 503) although the gate answered.
	FaultGateFailurePropagated = "gate-failure-propagated"
	// FaultEarlyChildResult: the background work answers a made-up result at
	// once and never makes the gate request.
	FaultEarlyChildResult = "early-child-result"
	// FaultStalledParent: the root provider hangs in its first turn.
	FaultStalledParent = "stalled-parent"
	// FaultCrashMidTurn: the root provider exits (code 1) in its first turn,
	// right after delegating (native: after starting its background task),
	// without a result.
	FaultCrashMidTurn = "provider-crash-mid-turn"
	// FaultMalformedLine: the child writes a line that is not JSON after the
	// gate answered.
	FaultMalformedLine = "provider-malformed-line"
	// FaultToolNeverReturns: the child announces its Bash tool call and never
	// runs it nor returns its result.
	FaultToolNeverReturns = "provider-tool-never-returns"
)

// Faults lists the provider fault modes.
var Faults = []string{FaultGateFailurePropagated, FaultEarlyChildResult, FaultStalledParent, FaultCrashMidTurn, FaultMalformedLine, FaultToolNeverReturns}

// IsFault reports whether name is a provider fault mode.
func IsFault(name string) bool {
	for _, f := range Faults {
		if f == name {
			return true
		}
	}
	return false
}

// MalformedLine is the line FaultMalformedLine writes on stdout: an
// assistant message cut short, not JSON.
const MalformedLine = `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":`
