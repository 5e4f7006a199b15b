package replay

// Reproduction says how a replayed verdict compares with the one the live
// run recorded, in the words `wireproof replay`, the index and the viewer
// print.
type Reproduction string

// Reproductions.
const (
	// Reproduced: the bundle has a recorded verdict and replay reached the
	// same one.
	Reproduced Reproduction = "reproduced"
	// Diverged: replay reached another verdict than the recorded one.
	Diverged Reproduction = "diverged"
	// NoLiveVerdict: the bundle has no recorded verdict to compare with (a
	// killed recorder, a plain recording).
	NoLiveVerdict Reproduction = "no live verdict"
)

// Reproduction says how the replayed verdict compares with the recorded
// one.
func (r *Result) Reproduction() Reproduction {
	switch {
	case r.Recorded == nil:
		return NoLiveVerdict
	case r.Reproduced:
		return Reproduced
	}
	return Diverged
}
