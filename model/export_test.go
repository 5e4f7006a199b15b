package model

// SetAdmitted sets the hook the gate calls as it lets a request in, and
// returns a function that removes it.
func SetAdmitted(f func(n int64)) (reset func()) {
	admitted = f
	return func() { admitted = nil }
}
