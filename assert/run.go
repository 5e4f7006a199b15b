package assert

import "fmt"

// RunEnd is what ended a run before its checks passed, as the driver's and
// the server's own events tell it (StageRun). The engine sets the one field
// the deciding event says; each check of BackgroundDelivery.Run words its
// own.
type RunEnd struct {
	// ServerExit: the server exited without being asked to stop.
	ServerExit *ServerExit
	// Deadline: the run's timeout expired (a deadline mark).
	Deadline *Cut
	// Interrupted: the driver was interrupted (an interrupted mark).
	Interrupted *Cut
	// Setup: a setup step failed (a setup-failed mark).
	Setup *StepError
	// Launch: how the parent's launchThread ended when it did not succeed.
	Launch string
	// Undelivered: why the run ended before delivery was proven (the
	// parent's subscription or a projection read ended, the driver gave up,
	// or the bundle ended).
	Undelivered string
}

// ServerExit is an exit of the server nobody asked for.
type ServerExit struct {
	How  string // "exit code 1", "signal killed (...)"
	Seq  uint64 // the proc.exit event
	T    int64  // its time
	When string // "before it became ready", "in phase running"
}

// Cut says when a run was cut short: the driver's "while ..." or the
// engine's "in phase ...". TimeoutSeconds is the deadline's timeout.
type Cut struct {
	TimeoutSeconds float64
	When           string
}

// StepError is a step of the driver that failed, and why.
type StepError struct {
	Step  string
	Error string
}

// The run-level checks (BackgroundDelivery.Run). Only one field of a RunEnd
// is set, so their order decides nothing; it is the order docs/checks.md
// lists them in.

func serverAlive(r RunEnd) *Failure {
	x := r.ServerExit
	if x == nil {
		return nil
	}
	return miss("the server to keep running until it is stopped",
		fmt.Sprintf("the server died with %s at t=%.3fs (seq %d) %s, without being asked to stop", x.How, float64(x.T)/1e9, x.Seq, x.When))
}

func deadline(r RunEnd) *Failure {
	if r.Deadline == nil {
		return nil
	}
	return miss("the run finished before its timeout", fmt.Sprintf("the %gs timeout expired %s", r.Deadline.TimeoutSeconds, r.Deadline.When))
}

func interrupted(r RunEnd) *Failure {
	if r.Interrupted == nil {
		return nil
	}
	return miss("the run to finish", "the driver was interrupted "+r.Interrupted.When)
}

func setup(r RunEnd) *Failure {
	switch {
	case r.Setup != nil:
		return miss("setup to succeed", fmt.Sprintf("step %s failed: %s", r.Setup.Step, r.Setup.Error))
	case r.Launch != "":
		return miss("launchThread to succeed", "launchThread "+r.Launch)
	}
	return nil
}

func streamDelivered(r RunEnd) *Failure {
	if r.Undelivered == "" {
		return nil
	}
	return miss("an observation with the secret acknowledged and every run terminal", r.Undelivered)
}
