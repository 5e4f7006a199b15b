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
// Underneath, [Correlator] follows every Effect RPC call on the WebSocket
// connections (json and ndjson serializations, numeric and string request
// ids) from its Request through its Chunks and Acks to the Exit, Interrupt or
// connection end that closed it, and [DecodeCause] flattens an Exit's cause.
//
// Typical use:
//
//	res, err := replay.ReplayFile(ctx, "evidence/idle-1.zst", nil)
//	if err != nil { ... } // the bundle could not be read
//	fmt.Println(res.Verdict.Status, res.Reproduced)
package replay
