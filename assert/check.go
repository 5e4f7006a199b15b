package assert

// Stage says when a check is evaluated.
type Stage string

// Stages of a run, in the order a background-delivery run reaches them (the
// event stage runs alongside, on every protocol event).
const (
	StageEvent       Stage = "event"       // on every protocol event (conformance)
	StageObservation Stage = "observation" // on every projection of the parent thread
	StageFinal       Stage = "final"       // on the completing observation
	StageNested      Stage = "nested"      // on the nested child's read
	StageClosing     Stage = "closing"     // on the completing observation, after the nested read
	StageRestart     Stage = "restart"     // on the read after the restart
	StageRun         Stage = "run"         // on the driver's and the server's own events
)

// Check is one check as a value: its id and message (the verdict's
// Failure.Check and Failure.Message), when it is evaluated, and its test, a
// pure function of what it observes that returns the failure (what was
// expected, what was seen, a diff where values were compared, the run it
// points at) or nil. The test leaves Check and Message empty: Checks.Run
// fills them from the value, so a failure's message is always its check's.
// The caller locates a failure (Seq, T, ThreadID).
type Check[O any] struct {
	ID      string
	Message string
	Stage   Stage
	Test    func(O) *Failure
}

// Info describes the check as a row of the catalogue, in suite.
func (c Check[O]) Info(suite string) CheckInfo {
	return CheckInfo{Suite: suite, Stage: c.Stage, ID: c.ID, Message: c.Message}
}

// Checks is an ordered list of checks: Run evaluates them in order and the
// first failure decides.
type Checks[O any] []Check[O]

// Run evaluates the checks on o, in order, and returns the first failure,
// with its check id and message filled in.
func (cs Checks[O]) Run(o O) *Failure {
	for i := range cs {
		if f := cs[i].Test(o); f != nil {
			f.Check, f.Message = cs[i].ID, cs[i].Message
			return f
		}
	}
	return nil
}

// Infos describes the checks, in order, as rows of the catalogue in suite.
func (cs Checks[O]) Infos(suite string) []CheckInfo {
	out := make([]CheckInfo, len(cs))
	for i := range cs {
		out[i] = cs[i].Info(suite)
	}
	return out
}

// Suite ids, as the verdict names them in Verdict.Suites.
const (
	// SuiteBackgroundDelivery: the reference verifier's scenario checks. They
	// run on verification runs only (a run mark or a scenario in the
	// manifest).
	SuiteBackgroundDelivery = "background-delivery"
	// SuiteConformance: the protocol-conformance checks, on every bundle.
	SuiteConformance = "protocol-conformance"
)

// SuiteResult is how one suite that ran on a bundle ended.
type SuiteResult struct {
	Suite  string `json:"suite"`
	Status Status `json:"status"` // passed or failed
	// Failure is the suite's first failure (the verdict's own Failure is the
	// first suite's failure, in the order the suites are listed).
	Failure *Failure `json:"failure,omitempty"`
}
