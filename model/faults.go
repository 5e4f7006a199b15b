package model

import "fmt"

// Fault modes: ways the model API misbehaves on purpose, once per Handler:
// on the first model call of a root instruction's first turn (a
// verification run's launch prompt), so that each fails a run live with its
// check while the CLI's retry of that call gets a good answer and the run
// goes on. (Claude Code retries a cut stream or a 529 itself, up to 10
// times, with nothing in the request that tells a retry from the first
// attempt: a fault that struck every attempt would end the run at its
// deadline minutes later.)
const (
	// FaultMalformedEvent: a content_block_delta whose data is not JSON
	// (check model-sse-event).
	FaultMalformedEvent = "model-malformed-event"
	// FaultStreamCut: the stream ends in the middle of the message, after
	// the first block's first delta, without message_stop (check
	// model-stream-complete).
	FaultStreamCut = "model-stream-cut"
	// FaultOverloaded: 529 overloaded_error (check model-api-error).
	FaultOverloaded = "model-overloaded"
	// FaultUnknownTool: a tool_use of a tool the request does not offer
	// (check model-tool-offered). The CLI answers it with an error result
	// and the model goes on with its plan.
	FaultUnknownTool = "model-unknown-tool"
)

// Faults lists the model fault modes.
var Faults = []string{FaultMalformedEvent, FaultStreamCut, FaultOverloaded, FaultUnknownTool}

// FaultChecks names the check each fault mode fails.
var FaultChecks = map[string]string{
	FaultMalformedEvent: "model-sse-event",
	FaultStreamCut:      "model-stream-complete",
	FaultOverloaded:     "model-api-error",
	FaultUnknownTool:    "model-tool-offered",
}

// UnknownTool is the tool FaultUnknownTool calls.
const UnknownTool = "wireproof_no_such_tool"

// MalformedData is the data of the event FaultMalformedEvent sends: a delta
// cut short, not JSON.
const MalformedData = `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`

// CheckFault returns an error naming fault when it is not a fault mode.
func CheckFault(fault string) error {
	if fault == "" {
		return nil
	}
	for _, f := range Faults {
		if f == fault {
			return nil
		}
	}
	return fmt.Errorf("unknown model fault %q (known: %v)", fault, Faults)
}
