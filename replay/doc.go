// Package replay re-runs the checks of a recorded run from its bundle's events
// alone, and decodes what the checks and the triage tools read from them.
//
// A verdict is a pure function of the event stream: [Engine] takes the events
// in seq order and reaches it, and everything the checks need that is not on
// the wire is in the driver's marks ([MarkRun], [MarkDeadline], ...). The live
// driver (package verify) feeds an Engine the recorder's events as they are
// written, through [Live]; [ReplayFile] feeds a fresh Engine the same events
// read back from the file and compares the two verdicts, so a live verdict is
// one replay reproduces.
//
// The engine routes every connection to the decoder of what it carries
// (package protocol; Effect RPC to effectrpc.Correlator), runs the event
// suites on the protocol events, and hands what a verification run is
// checked for to the [Scenario] values it is given (EngineOptions.Scenarios):
// it knows no scenario itself. T3's background delivery is package
// delivery's.
//
// Typical use:
//
//	res, err := replay.ReplayFile(ctx, "evidence/idle-1.zst", delivery.Options(nil))
//	if err != nil { ... } // the bundle could not be read
//	fmt.Println(res.Verdict.Status, res.Reproduced)
package replay
