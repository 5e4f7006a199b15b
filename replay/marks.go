package replay

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
)

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
	// StepMark, {"step":"token","error":"..."} (a Step).
	MarkSetupFailed = "setup-failed"
	// MarkRestart begins the restart phase: the server is about to be stopped
	// and started again on the same home. The HTTP read of the thread that
	// follows the next proc.ready is the restart read.
	MarkRestart = "restart"
	// MarkDeadline: the run's timeout expired. Body:
	// {"timeoutSeconds":N,"while":"starting the server"}, "while" saying
	// what the driver was doing (older bundles have none).
	MarkDeadline = "deadline"
	// MarkInterrupted: the driver was interrupted (SIGINT/SIGTERM). Body:
	// {"while":"..."} as for MarkDeadline.
	MarkInterrupted = "interrupted"
)

// Phase is where a run is: the driver's phases, which its phase marks
// carry, and the engine's own (Status.Phase; see engine.go).
type Phase string

// Driver phases carried by MarkPhase, in the order a run goes through them.
const (
	PhaseStarting   Phase = "starting"
	PhaseSetup      Phase = "setup"
	PhaseRunning    Phase = "running"
	PhaseRestarting Phase = "restarting"
	PhaseDone       Phase = "done"
)

// Step is a step of the driver, named in the marks that say where a run
// stopped (StepMark, InterruptedMark).
type Step string

// Steps of the driver, in the order a run takes them.
const (
	StepGate        Step = "gate"         // starting the controlled gate
	StepProxy       Step = "proxy"        // starting the recording proxy
	StepProviderTap Step = "provider-tap" // starting the provider evidence tap
	StepModel       Step = "model"        // starting the scripted model API and its recording proxy (--provider-cli)
	StepServer      Step = "server"       // starting the server until its ready line
	StepToken       Step = "token"        // exchanging the bootstrap token
	StepProject     Step = "project"      // creating the project
	StepTicket      Step = "ticket"       // getting the WebSocket ticket
	StepConnect     Step = "connect"      // connecting the RPC socket
	StepLaunch      Step = "launch"       // launching the thread
	StepRunning     Step = "running"      // following the thread
	StepStream      Step = "stream"       // the RPC stream the driver follows the thread on
	StepRestart     Step = "restart"      // restarting the server until its ready line
	StepRestartRead Step = "restart-read" // reading the thread back after the restart
)

// RunInfo is the body of the MarkRun mark: what the checks need to know about
// the run that is not on the wire.
type RunInfo struct {
	Scenario  assert.Scenario `json:"scenario"`
	ThreadID  string          `json:"threadId"`
	ProjectID string          `json:"projectId,omitempty"`
	Secret    string          `json:"secret"`  // the gate's RESULT_<uuid>
	GateURL   string          `json:"gateUrl"` // the child's gate URL; the parent's is GateURL+"/parent"
	Provider  string          `json:"provider,omitempty"`
	Model     string          `json:"model,omitempty"`
	FailGate  bool            `json:"failGate,omitempty"`
}

// MarkDriverError: the driver could not go on (the RPC stream ended or failed
// before the run finished). Body: {"error":"..."}. The run fails with
// assert.CheckStreamDelivered, decided at this mark.
const MarkDriverError = "driver-error"

// The bodies of the marks, one type each: the driver writes them with
// EncodeMark and the engine reads them with DecodeMark, so both agree on
// their shape. A mark whose body does not decode is a decode error of the
// replay, never silently read as zero values.
type (
	// PhaseMark is the body of MarkPhase.
	PhaseMark struct {
		Phase Phase `json:"phase"`
	}
	// StepMark is the body of MarkSetupFailed and MarkDriverError: the step
	// that failed and why.
	StepMark struct {
		Step  Step   `json:"step"`
		Error string `json:"error"`
	}
	// DeadlineMark is the body of MarkDeadline.
	DeadlineMark struct {
		TimeoutSeconds float64 `json:"timeoutSeconds"`
		// While says what the driver was doing ("starting the server");
		// bundles from older drivers have none.
		While string `json:"while,omitempty"`
	}
	// InterruptedMark is the body of MarkInterrupted: where the driver was.
	InterruptedMark struct {
		Step  Step   `json:"step,omitempty"`
		Phase Phase  `json:"phase,omitempty"`
		While string `json:"while,omitempty"` // as in DeadlineMark
	}
	// RestartMark is the body of MarkRestart.
	RestartMark struct {
		ThreadID string `json:"threadId"`
	}
)

// EncodeMark returns the mark event name with body (one of the *Mark types,
// or RunInfo for MarkRun) as its JSON payload.
func EncodeMark(name string, body any) (*bundle.Event, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("mark %s: %w", name, err)
	}
	return &bundle.Event{Kind: bundle.KindMark, Name: name, Body: bundle.Text(b)}, nil
}

// DecodeMark decodes the body of mark ev into v (a pointer to the mark's
// type). Members of the wrong type, a body that is not a JSON object and a
// value the type does not know (a scenario or phase that does not exist)
// are errors; members v does not know are ignored (newer drivers may add
// some).
func DecodeMark(ev *bundle.Event, v any) error {
	d := ev.Body.Data
	if len(bytes.TrimSpace(d)) == 0 || bytes.TrimSpace(d)[0] != '{' {
		return fmt.Errorf("%s mark: the body is not a JSON object: %q", ev.Name, clip(d, 80))
	}
	if err := json.Unmarshal(d, v); err != nil {
		return fmt.Errorf("%s mark: %w", ev.Name, err)
	}
	if c, ok := v.(interface{ check() error }); ok {
		if err := c.check(); err != nil {
			return fmt.Errorf("%s mark: %w", ev.Name, err)
		}
	}
	return nil
}

// check: a run mark names a known scenario, or none (the manifest's then).
func (r *RunInfo) check() error {
	if r.Scenario != "" && !r.Scenario.Known() {
		return fmt.Errorf("unknown scenario %q", r.Scenario)
	}
	return nil
}

// check: a phase mark names one of the driver's phases.
func (p *PhaseMark) check() error {
	switch p.Phase {
	case PhaseStarting, PhaseSetup, PhaseRunning, PhaseRestarting, PhaseDone:
		return nil
	}
	return fmt.Errorf("unknown phase %q", p.Phase)
}
