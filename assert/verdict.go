// Package assert holds wireproof's checks as data: each a Check value (id,
// message, stage, a pure test of what it observes), grouped into the ordered
// lists of the background-delivery suite (BackgroundDelivery: invariants at
// every projection observation, final checks on the completing observation,
// the nested read, the restart read and the run's own events) and the
// protocol-conformance suite (Conformance). Catalogue lists every check of
// every suite. The checks have the meaning of the live verifier's
// (docs/checks.md lists them).
package assert

// Status is how a verdict, a suite or the restart ended.
type Status string

// Verdict statuses.
const (
	StatusPassed Status = "passed"
	StatusFailed Status = "failed"
	// StatusSkipped: no check applies. The bundle records no verification
	// run (no run mark and no scenario in its manifest), as a plain
	// `wireproof record` session does.
	StatusSkipped Status = "skipped"
	// StatusNotApplicable: the run's scenario cannot apply to its
	// provider (a NotApplicable the scenario declares; the verdict's
	// Reason says why). Nothing was checked: the run neither passed nor
	// failed. It is decided at the bundle's header, from its manifest, so
	// a live run drives nothing.
	StatusNotApplicable Status = "not-applicable"

	// Statuses of a run that has no verdict to give one: a bundle that
	// could not be read (replay, index, view) and a run SIGINT or SIGTERM
	// cut short (verify's results.json).
	StatusUnreadable  Status = "unreadable"
	StatusInterrupted Status = "interrupted"
	// StatusDamaged: a bundle whose stored bytes are not what its writer
	// wrote (bundle.DamagedError); what it holds is not evidence of a run.
	StatusDamaged Status = "damaged"
)

// Verdict is the outcome of one run, computed live and again by replay from the
// same events; the two must be equal. It holds no wall-clock time and nothing
// that depends on goroutine timing, so it serializes to the same bytes every time.
type Verdict struct {
	Status   Status   `json:"status"` // passed, failed, skipped or not-applicable
	Scenario Scenario `json:"scenario"`
	ThreadID string   `json:"threadId,omitempty"`
	// Provider and Reason, set only when the scenario did not apply (the
	// status is not-applicable, or failed when an event suite failed
	// nonetheless): the run's provider driver and why the scenario cannot
	// apply to it, a sentence a user can act on.
	Provider Provider `json:"provider,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	// Failure is the first check that failed; nil when Status is passed.
	Failure *Failure `json:"failure,omitempty"`
	// RunCount and AcknowledgementIDs are what the final checks saw, kept so the
	// restart checks (and a reader) can compare against them.
	RunCount           int      `json:"runCount,omitempty"`
	AcknowledgementIDs []string `json:"acknowledgementIds,omitempty"`
	// Restart is passed, failed or skipped (not reached).
	Restart Status `json:"restart,omitempty"`
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
	Diff     string `json:"diff,omitempty"` // (-want +got) where a value was compared; deterministic, never go-cmp text
}

// Check ids. Each names one assertion of the live verifier; its message,
// stage and test are in its Check value (BackgroundDelivery, Conformance;
// Catalogue lists them all).
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

// Protocol-conformance checks (suite SuiteConformance): on every bundle, on
// every decoded protocol event, until the run's end mark.
const (
	CheckAnswersRequest   = "answers-request"
	CheckIDNotReused      = "id-not-reused"
	CheckStreamAcked      = "effect-stream-acked"
	CheckInterruptAnswer  = "effect-interrupt-answered"
	CheckJSONRPCEnvelope  = "jsonrpc-envelope"
	CheckJSONRPCAnswered  = "jsonrpc-answered" // a Codex app-server's request left unanswered at its exit
	CheckHTTPBodyLength   = "http-body-length"
	CheckWebSocketCloseOK = "ws-close-code"

	// Model calls (Anthropic's Messages API).
	CheckModelSSEEvent       = "model-sse-event"
	CheckModelSSEOrder       = "model-sse-order"
	CheckModelStreamComplete = "model-stream-complete"
	CheckModelAPIError       = "model-api-error"
	CheckModelToolResult     = "model-tool-result"
	CheckModelIDUnique       = "model-id-unique"
	CheckModelStopReason     = "model-stop-reason"
	CheckModelToolOffered    = "model-tool-offered"
	CheckModelCassetteMiss   = "model-cassette-miss"
)
