package replay

// Mark names the live driver (package verify) writes as bundle.KindMark events,
// and replay reads. The verdict is a pure function of the event stream, so every
// fact the checks need that is not on the wire is written as a mark first.
const (
	// MarkRun is written before the thread is launched. Body: RunInfo.
	MarkRun = "run"
	// MarkPhase records the driver's progress. Body: {"phase":"..."}, one of the
	// Phase* values. Informational: checks do not depend on it.
	MarkPhase = "phase"
	// MarkSetupFailed: a setup step failed before the scenario ran. Body:
	// {"step":"token|project|ticket|connect|launch|subscribe","error":"..."}.
	MarkSetupFailed = "setup-failed"
	// MarkRestart begins the restart phase: the server is about to be stopped
	// and started again on the same home. The HTTP read of the thread that
	// follows the next proc.ready is the restart read.
	MarkRestart = "restart"
	// MarkDeadline: the run's timeout expired. Body: {"timeoutSeconds":N}.
	MarkDeadline = "deadline"
	// MarkInterrupted: the driver was interrupted (SIGINT/SIGTERM).
	MarkInterrupted = "interrupted"
)

// Driver phases carried by MarkPhase.
const (
	PhaseStarting   = "starting"
	PhaseSetup      = "setup"
	PhaseRunning    = "running"
	PhaseRestarting = "restarting"
	PhaseDone       = "done"
)

// RunInfo is the body of the MarkRun mark: what the checks need to know about
// the run that is not on the wire.
type RunInfo struct {
	Scenario  string `json:"scenario"` // idle, active, native or nested
	ThreadID  string `json:"threadId"`
	ProjectID string `json:"projectId,omitempty"`
	Secret    string `json:"secret"`  // the gate's RESULT_<uuid>
	GateURL   string `json:"gateUrl"` // the child's gate URL; the parent's is GateURL+"/parent"
	Provider  string `json:"provider,omitempty"`
	Model     string `json:"model,omitempty"`
	FailGate  bool   `json:"failGate,omitempty"`
}

// MarkDriverError: the driver could not go on (the RPC stream ended or failed
// before the run finished). Body: {"error":"..."}. The run fails with
// assert.CheckStreamDelivered, decided at this mark.
const MarkDriverError = "driver-error"
