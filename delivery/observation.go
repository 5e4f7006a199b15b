package delivery

import "github.com/wireproof/wireproof/t3"

// ObservationSource says which wire exchange carried a projection observation.
type ObservationSource string

// Observation sources.
const (
	// SourceLaunch: the projection in a launchThread answer.
	SourceLaunch ObservationSource = "launch"
	// SourceSnapshot: a snapshot item of a subscribeThread chunk.
	SourceSnapshot ObservationSource = "snapshot"
	// SourceGetProjection: a getThreadProjection answer.
	SourceGetProjection ObservationSource = "getThreadProjection"
	// SourceHTTPRead: GET /api/orchestration/threads/:id.
	SourceHTTPRead ObservationSource = "http-read"
	// SourceNestedRead: the getThreadProjection of the nested child that the
	// scenario asked for (PhaseNestedRead).
	SourceNestedRead ObservationSource = "nested-read"
)

// Observation is one projection of a thread the scenario observed, handed to
// the hook of Observed before the checks run on it. Triage tools use it to
// retell a run's story without re-implementing the decoding.
type Observation struct {
	Seq      uint64 // the event that carried the projection
	T        int64  // its time, ns since the recording started
	ThreadID string
	// Parent: ThreadID is the run's parent thread (the others are children the
	// nested checks follow).
	Parent bool
	Source ObservationSource
	// Projection is valid only during the call: the scenario's decoders may
	// reuse the memory behind it. Copy what you keep.
	Projection *t3.Projection
}
