//go:build unix && !linux

package record

// orphanKiller does nothing where there is no pidfd to wait on: Group.Wait
// kills what the leader left once cmd.Wait returns.
func orphanKiller(int) func() { return func() {} }
