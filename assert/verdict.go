// Package assert holds wireproof's check engine and the background-delivery
// suites: invariants evaluated at every projection observation, in order, and
// final checks on the last observation and the restart read. The checks have the
// meaning of the live verifier's (docs/checks.md lists them).
package assert

// Verdict statuses.
const (
	StatusPassed = "passed"
	StatusFailed = "failed"
	// StatusSkipped: no check applies. The bundle records no verification
	// run (no run mark and no scenario in its manifest), as a plain
	// `wireproof record` session does.
	StatusSkipped = "skipped"
)

// Verdict is the outcome of one run, computed live and again by replay from the
// same events; the two must be equal. It holds no wall-clock time and nothing
// that depends on goroutine timing, so it serializes to the same bytes every time.
type Verdict struct {
	Status   string `json:"status"` // passed, failed or skipped
	Scenario string `json:"scenario"`
	ThreadID string `json:"threadId,omitempty"`
	// Failure is the first check that failed; nil when Status is passed.
	Failure *Failure `json:"failure,omitempty"`
	// RunCount and AcknowledgementIDs are what the final checks saw, kept so the
	// restart checks (and a reader) can compare against them.
	RunCount           int      `json:"runCount,omitempty"`
	AcknowledgementIDs []string `json:"acknowledgementIds,omitempty"`
	// Restart is passed, failed or skipped (not reached).
	Restart string `json:"restart,omitempty"`
	// Milestones are the driver facts the live verifier reports with a failure.
	Milestones *Milestones `json:"milestones,omitempty"`
	// Suites are the suites that ran, in order (background-delivery on
	// verification runs, then protocol-conformance on every bundle).
	// Verdicts recorded before suites existed lack it: replay then compares
	// everything else (see replay.Comparable).
	Suites []SuiteResult `json:"suites,omitempty"`
}

// Milestones are derived from gate and projection events.
type Milestones struct {
	ParentFinished      bool `json:"parentFinished"`
	NestedChildFinished bool `json:"nestedChildFinished"`
	GateRequested       bool `json:"gateRequested"`
	GateReleased        bool `json:"gateReleased"`
	ParentGateRequested bool `json:"parentGateRequested"`
	// Delivered: some subagent's completion was delivered or acknowledged (the
	// live driver answers the parent's foreground gate on it in active).
	Delivered bool `json:"delivered,omitempty"`
}

// Failure says which check failed, where, and why.
type Failure struct {
	Check    string `json:"check"`   // one of the Check* ids
	Message  string `json:"message"` // the verifier's message for the check
	Expected string `json:"expected,omitempty"`
	Seen     string `json:"seen,omitempty"`
	Seq      uint64 `json:"seq"` // the event that decided it
	T        int64  `json:"t"`   // its time, ns since the recording started
	ThreadID string `json:"threadId,omitempty"`
	RunID    string `json:"runId,omitempty"`
	Diff     string `json:"diff,omitempty"` // go-cmp diff (-want +got) where a value was compared
}

// Check ids. Each names one assertion of the live verifier; the message that goes
// with it is Messages[id].
const (
	// Per-observation invariants.
	CheckParentNotFailed      = "parent-not-failed"
	CheckNoEarlyTerminalChild = "no-early-terminal-child"
	CheckTerminalChildSecret  = "terminal-child-has-secret"

	// Final checks.
	CheckStreamDelivered      = "stream-delivered"
	CheckGateUsed             = "gate-used"
	CheckDelegationPath       = "delegation-path"
	CheckTypedNotification    = "typed-notification"
	CheckSingleUserMessage    = "single-user-message"
	CheckNoFailedRun          = "no-failed-run"
	CheckSingleNotification   = "single-notification"
	CheckChildCompleted       = "child-completed"
	CheckChildResultKept      = "child-result-kept"
	CheckDeliveryAcknowledged = "delivery-acknowledged"
	CheckNestedOwner          = "nested-owner"
	CheckNestedGrandchild     = "nested-grandchild"
	CheckNestedResult         = "nested-result"
	CheckNoStaleBackground    = "no-stale-background"
	CheckActiveSingleRun      = "active-single-run"
	CheckActiveParentGate     = "active-parent-gate"
	CheckContinuationRun      = "continuation-run"

	// Restart durability.
	CheckRestartRead            = "restart-read"
	CheckRestartAcknowledgement = "restart-acknowledgement"
	CheckRestartRunsCompleted   = "restart-runs-completed"
	CheckRestartNoExtraRun      = "restart-no-extra-run"

	// Run-level outcomes decided by the driver's own events.
	CheckServerAlive = "server-alive" // the server exited without being asked to
	CheckDeadline    = "deadline"     // the run did not finish before its timeout
	CheckInterrupted = "interrupted"  // the run was interrupted (SIGINT)
	CheckSetup       = "setup"        // authentication, project creation, ticket or launch failed
)

// Messages gives each check the message the live verifier uses for it.
var Messages = map[string]string{
	CheckParentNotFailed:        "Parent failed before delivery",
	CheckNoEarlyTerminalChild:   "Child published a terminal result before its gated work finished",
	CheckTerminalChildSecret:    "Child published an incorrect or failed result",
	CheckStreamDelivered:        "Stream ended without proof of delivery",
	CheckGateUsed:               "Child did not use the controlled gate",
	CheckDelegationPath:         "Wrong delegation path",
	CheckTypedNotification:      "Missing typed notification",
	CheckSingleUserMessage:      "Background delivery appeared as an ordinary user message",
	CheckNoFailedRun:            "A parent run failed",
	CheckSingleNotification:     "One completion produced multiple notifications",
	CheckChildCompleted:         "Child did not complete successfully",
	CheckChildResultKept:        "Published task result lost the actual work",
	CheckDeliveryAcknowledged:   "Parent did not read task_status",
	CheckNestedOwner:            "Missing nested task owner",
	CheckNestedGrandchild:       "Missing grandchild",
	CheckNestedResult:           "Nested result was lost",
	CheckNoStaleBackground:      "Stale background work remains after completion",
	CheckActiveSingleRun:        "Active delivery unexpectedly started another run",
	CheckActiveParentGate:       "Parent never entered the foreground gate",
	CheckContinuationRun:        "Expected a new continuation after the initial turn ended",
	CheckRestartRead:            "Restart read failed",
	CheckRestartAcknowledgement: "Acknowledgement was lost or duplicated on restart",
	CheckRestartRunsCompleted:   "Restart left an unfinished run",
	CheckRestartNoExtraRun:      "Restart created an extra continuation",
	CheckServerAlive:            "Server exited during the run",
	CheckDeadline:               "Verification timed out",
	CheckInterrupted:            "Verification interrupted",
	CheckSetup:                  "Setup failed",
}

// Protocol-conformance checks (suite SuiteConformance): on every bundle, on
// every decoded protocol event, until the run's end mark.
const (
	CheckAnswersRequest   = "answers-request"
	CheckIDNotReused      = "id-not-reused"
	CheckStreamAcked      = "effect-stream-acked"
	CheckInterruptAnswer  = "effect-interrupt-answered"
	CheckJSONRPCEnvelope  = "jsonrpc-envelope"
	CheckHTTPBodyLength   = "http-body-length"
	CheckWebSocketCloseOK = "ws-close-code"
)

func init() {
	for id, msg := range map[string]string{
		CheckAnswersRequest:   "A response answers no request in flight",
		CheckIDNotReused:      "A request id was reused while in flight",
		CheckStreamAcked:      "A stream chunk was sent before the previous one was acknowledged",
		CheckInterruptAnswer:  "An interrupted call was never answered",
		CheckJSONRPCEnvelope:  "Invalid JSON-RPC 2.0 message",
		CheckHTTPBodyLength:   "HTTP body length differs from its Content-Length",
		CheckWebSocketCloseOK: "Invalid WebSocket close code",
	} {
		Messages[id] = msg
	}
}
