package redact

// Find returns where the secrets of s occur in b, in every spelling the
// redaction knows (see the package doc), as the byte ranges the redaction
// would replace, in order and not overlapping. It is what a tool that looks
// for given secrets in what was written (wireproof scan --redact) asks.
func (s *Set) Find(b []byte) [][2]int {
	spans, _ := s.find(b)
	var out [][2]int
	for _, sp := range mergeSpans(b, spans) {
		out = append(out, [2]int{sp.start, sp.end})
	}
	return out
}
