package assert

import (
	"github.com/wireproof/wireproof/t3"
)

// What the checks of the background-delivery suite observe, one type per
// stage. Each carries the run's Suite (scenario and secret) so that a check is
// a pure function of its argument.
type (
	// Observed is one projection of the parent thread (StageObservation).
	// Released says whether the child gate had been released before it.
	Observed struct {
		Suite
		Projection *t3.Projection
		Released   bool
	}
	// Completing is the completing observation of the parent thread, with the
	// facts the driver's events established by then (StageFinal and
	// StageClosing).
	Completing struct {
		Suite
		Projection *t3.Projection
		Facts
	}
	// NestedRead is the read of the nested child thread after the main checks
	// (StageNested): its projection, or, when the read failed, nil and how it
	// failed.
	NestedRead struct {
		Suite
		Child  *t3.Projection
		Failed string // how the read ended without a projection ("getThreadProjection of the child failed: ...")
	}
	// Restarted is the read of the parent thread after the restart, with what
	// the final checks saw before it (StageRestart).
	Restarted struct {
		Suite
		Read               RestartRead
		RunCount           int      // runs of the completing observation
		AcknowledgementIDs []string // its assistant messages carrying the secret
	}
)

// BackgroundDeliverySuite is the background-delivery suite as data: its
// checks, grouped by the stage that evaluates them, each list in the
// reference verifier's order. The engine runs each list at its stage; the
// first failure decides the run.
type BackgroundDeliverySuite struct {
	// Observation: the invariants, on every projection of the parent thread
	// until the run completes.
	Observation Checks[Observed]
	// Main: the final checks on the completing observation, up to the point
	// where the nested scenario needs the child's projection.
	Main Checks[Completing]
	// Nested: on the nested child's read (scenario nested only).
	Nested Checks[NestedRead]
	// Closing: on the completing observation after the nested read.
	Closing Checks[Completing]
	// Restart: on the read of the thread after the restart.
	Restart Checks[Restarted]
	// Run: on the driver's and the server's own events, whenever they end the
	// run early.
	Run Checks[RunEnd]
}

// BackgroundDelivery is the background-delivery suite. Today's ids, messages
// and order are the reference verifier's; cmd/wireproof's golden verdicts
// hold them.
//
// Two checks cannot fail through the engine, because the invariants of
// Observation run first on the same observation and fail earlier:
// no-failed-run (parent-not-failed sees the failed run) and child-result-kept
// (a completed child without the secret fails terminal-child-has-secret).
// They are kept in the reference order, so that a list run on its own
// matches it (TestUnreachableChecks runs Main alone to show they fail there).
var BackgroundDelivery = BackgroundDeliverySuite{
	Observation: Checks[Observed]{
		{ID: CheckParentNotFailed, Message: "Parent failed before delivery", Stage: StageObservation, Test: parentNotFailed},
		{ID: CheckNoEarlyTerminalChild, Message: "Child published a terminal result before its gated work finished", Stage: StageObservation, Test: noEarlyTerminalChild},
		{ID: CheckTerminalChildSecret, Message: "Child published an incorrect or failed result", Stage: StageObservation, Test: terminalChildHasSecret},
	},
	// The three checks of the app-owned child (child-completed,
	// child-result-kept, delivery-acknowledged) each look at every app-owned
	// subagent; delegation-path, before them, admits at most one, so the
	// order is the reference's, which checks them subagent by subagent.
	Main: Checks[Completing]{
		{ID: CheckGateUsed, Message: "Child did not use the controlled gate", Stage: StageFinal, Test: gateUsed},
		{ID: CheckDelegationPath, Message: "Wrong delegation path", Stage: StageFinal, Test: delegationPath},
		{ID: CheckTypedNotification, Message: "Missing typed notification", Stage: StageFinal, Test: typedNotification},
		{ID: CheckSingleUserMessage, Message: "Background delivery appeared as an ordinary user message", Stage: StageFinal, Test: singleUserMessage},
		{ID: CheckNoFailedRun, Message: "A parent run failed", Stage: StageFinal, Test: noFailedRun},
		{ID: CheckSingleNotification, Message: "One completion produced multiple notifications", Stage: StageFinal, Test: singleNotification},
		{ID: CheckChildCompleted, Message: "Child did not complete successfully", Stage: StageFinal, Test: childCompleted},
		{ID: CheckChildResultKept, Message: "Published task result lost the actual work", Stage: StageFinal, Test: childResultKept},
		{ID: CheckDeliveryAcknowledged, Message: "Parent did not read task_status", Stage: StageFinal, Test: deliveryAcknowledged},
		{ID: CheckNestedOwner, Message: "Missing nested task owner", Stage: StageFinal, Test: nestedOwner},
	},
	Nested: Checks[NestedRead]{
		{ID: CheckNestedGrandchild, Message: "Missing grandchild", Stage: StageNested, Test: nestedGrandchild},
		{ID: CheckNestedResult, Message: "Nested result was lost", Stage: StageNested, Test: nestedResult},
	},
	Closing: Checks[Completing]{
		{ID: CheckNoStaleBackground, Message: "Stale background work remains after completion", Stage: StageClosing, Test: noStaleBackground},
		{ID: CheckActiveSingleRun, Message: "Active delivery unexpectedly started another run", Stage: StageClosing, Test: activeSingleRun},
		{ID: CheckActiveParentGate, Message: "Parent never entered the foreground gate", Stage: StageClosing, Test: activeParentGate},
		{ID: CheckContinuationRun, Message: "Expected a new continuation after the initial turn ended", Stage: StageClosing, Test: continuationRun},
	},
	Restart: Checks[Restarted]{
		{ID: CheckRestartRead, Message: "Restart read failed", Stage: StageRestart, Test: restartRead},
		{ID: CheckRestartAcknowledgement, Message: "Acknowledgement was lost or duplicated on restart", Stage: StageRestart, Test: restartAcknowledgement},
		{ID: CheckRestartRunsCompleted, Message: "Restart left an unfinished run", Stage: StageRestart, Test: restartRunsCompleted},
		{ID: CheckRestartNoExtraRun, Message: "Restart created an extra continuation", Stage: StageRestart, Test: restartNoExtraRun},
	},
	Run: Checks[RunEnd]{
		{ID: CheckServerAlive, Message: "Server exited during the run", Stage: StageRun, Test: serverAlive},
		{ID: CheckDeadline, Message: "Verification timed out", Stage: StageRun, Test: deadline},
		{ID: CheckInterrupted, Message: "Verification interrupted", Stage: StageRun, Test: interrupted},
		{ID: CheckSetup, Message: "Setup failed", Stage: StageRun, Test: setup},
		{ID: CheckStreamDelivered, Message: "Stream ended without proof of delivery", Stage: StageRun, Test: streamDelivered},
	},
}

// Infos lists the suite's checks, stage by stage, as rows of the catalogue.
func (s BackgroundDeliverySuite) Infos() []CheckInfo {
	const id = SuiteBackgroundDelivery
	var out []CheckInfo
	out = append(out, s.Observation.Infos(id)...)
	out = append(out, s.Main.Infos(id)...)
	out = append(out, s.Nested.Infos(id)...)
	out = append(out, s.Closing.Infos(id)...)
	out = append(out, s.Restart.Infos(id)...)
	return append(out, s.Run.Infos(id)...)
}
