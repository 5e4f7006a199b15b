package assert

// CheckInfo is one row of the catalogue: a check's suite, stage, id and
// message.
type CheckInfo struct {
	Suite   string `json:"suite"`
	Stage   Stage  `json:"stage"`
	ID      string `json:"id"`
	Message string `json:"message"`
}

// Catalogue lists every check of every suite wireproof runs, in order: the
// background-delivery suite stage by stage (observation, final, nested,
// closing, restart, run), then the protocol-conformance suite. `wireproof
// checks` prints it and docs/architecture.md's table is generated from it.
func Catalogue() []CheckInfo {
	return append(BackgroundDelivery.Infos(), Conformance.Infos(SuiteConformance)...)
}

// Lookup returns the catalogue's row of check id.
func Lookup(id string) (CheckInfo, bool) {
	for _, c := range Catalogue() {
		if c.ID == id {
			return c, true
		}
	}
	return CheckInfo{}, false
}
