package bundle

// Contents is a whole bundle in memory: for tests, small tools and golden
// files. Streaming readers should use Reader instead.
type Contents struct {
	Header          Header
	Events          []Event // every event after the header, trailer excluded, each detached
	Trailer         *Trailer
	Truncated       bool
	TruncatedReason string
}

// ReadFile reads every event of the bundle at path. A truncated bundle is not
// an error: its complete events are returned and Truncated says so.
func ReadFile(path string, opts *ReaderOptions) (*Contents, error) {
	r, err := Open(path, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	c := &Contents{Header: r.Header()}
	for ev, err := range r.All() {
		if err != nil {
			return c, err
		}
		ev.Detach()
		c.Events = append(c.Events, *ev)
	}
	c.Trailer, c.Truncated, c.TruncatedReason = r.Trailer(), r.Truncated(), r.TruncatedReason()
	return c, nil
}
