package assert_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/t3"
)

func str(s string) *string { return &s }

// completing is a final observation of idle that passes every main check.
func completing() *t3.Projection {
	return &t3.Projection{
		Runs:      []t3.Run{{ID: "r1", Status: t3.RunCompleted}, {ID: "r2", Status: t3.RunCompleted}},
		Subagents: []t3.Subagent{{ID: "s1", Origin: t3.OriginAppOwned, Status: t3.SubagentCompleted, Result: str("S"), CompletionDelivery: &t3.CompletionDelivery{State: t3.DeliveryAcknowledged}}},
		Messages:  []t3.Message{{ID: "m1", Role: t3.RoleAssistant, Text: "ACK:S"}},
		TurnItems: []t3.TurnItem{{Type: t3.ItemUserMessage}, {Type: t3.ItemNotification}},
	}
}

// TestUnreachableChecks: no-failed-run and child-result-kept cannot fail
// through the engine (the invariants fail first on the same observation), so
// their nearest reachable form is the Main list run on its own.
func TestUnreachableChecks(t *testing.T) {
	s := assert.Suite{Scenario: assert.ScenarioIdle, Secret: "S"}
	tests := []struct {
		name   string
		mutate func(p *t3.Projection)
		want   string
	}{
		{"passes", func(*t3.Projection) {}, ""},
		{"failed run", func(p *t3.Projection) { p.Runs[1].Status = t3.RunFailed }, assert.CheckNoFailedRun},
		{"result lost", func(p *t3.Projection) { p.Subagents[0].Result = str("nothing") }, assert.CheckChildResultKept},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := completing()
			tt.mutate(p)
			got := ""
			if f := assert.BackgroundDelivery.Main.Run(assert.Completing{Suite: s, Projection: p, Facts: assert.Facts{Released: true}}); f != nil {
				got = f.Check
				if c, _ := assert.Lookup(got); f.Message != c.Message {
					t.Errorf("message %q, want the catalogue's %q", f.Message, c.Message)
				}
			}
			if got != tt.want {
				t.Errorf("Main failed %q, want %q", got, tt.want)
			}
			// Through the invariants first, as the engine runs them, the
			// same observation fails earlier.
			if tt.want != "" {
				if f := assert.BackgroundDelivery.Observation.Run(assert.Observed{Suite: s, Projection: p, Released: true}); f == nil {
					t.Errorf("the invariants pass an observation that fails %s", tt.want)
				}
			}
		})
	}
}

func TestRestartAcknowledgementDiff(t *testing.T) {
	s := assert.Suite{Secret: "S"}
	body := `{"projection":{"messages":[{"id":"m1","role":"assistant","text":"ACK:S"},{"id":"m9","role":"assistant","text":"ACK:S"}],"runs":[]}}`
	f := assert.BackgroundDelivery.Restart.Run(assert.Restarted{Suite: s, Read: assert.RestartRead{Status: 200, Body: []byte(body)}, AcknowledgementIDs: []string{"m1"}})
	if f == nil || f.Check != assert.CheckRestartAcknowledgement {
		t.Fatalf("failure = %+v, want restart-acknowledgement", f)
	}
	want := " \t\"m1\"\n+\t\"m9\"\n"
	if diff := cmp.Diff(want, f.Diff); diff != "" {
		t.Errorf("diff text (-want +got):\n%s", diff)
	}
}

// TestStageInputs: the reads that failed before a check could see a value
// (a nested read that ended without a projection, a restart read the driver
// could not make) fail the first check of their list with what happened, and
// only that one; each run-level fact fails its own check.
func TestStageInputs(t *testing.T) {
	s := assert.Suite{Scenario: assert.ScenarioNested, Secret: "S"}
	bd := assert.BackgroundDelivery
	tests := []struct {
		name  string
		got   *assert.Failure
		check string
		want  string // Seen
	}{
		{"nested read failed", bd.Nested.Run(assert.NestedRead{Suite: s, Failed: "getThreadProjection of the child failed"}),
			assert.CheckNestedGrandchild, "getThreadProjection of the child failed"},
		{"grandchild result lost", bd.Nested.Run(assert.NestedRead{Suite: s, Child: &t3.Projection{Subagents: []t3.Subagent{{ID: "g", Result: str("x")}}}}),
			assert.CheckNestedResult, `grandchild g result "x"`},
		{"restart read not made", bd.Restart.Run(assert.Restarted{Suite: s, Read: assert.RestartRead{NotMade: &assert.StepError{Step: "restart-read", Error: "refused"}}}),
			assert.CheckRestartRead, "the restart read could not be made (restart-read): refused"},
		{"restart read 500", bd.Restart.Run(assert.Restarted{Suite: s, Read: assert.RestartRead{Status: 500}}),
			assert.CheckRestartRead, "HTTP 500"},
		{"server died", bd.Run.Run(assert.RunEnd{ServerExit: &assert.ServerExit{How: "exit code 3", Seq: 9, T: 1.5e9, When: "in phase running"}}),
			assert.CheckServerAlive, "the server died with exit code 3 at t=1.500s (seq 9) in phase running, without being asked to stop"},
		{"deadline", bd.Run.Run(assert.RunEnd{Deadline: &assert.Cut{TimeoutSeconds: 5, When: "while starting the server"}}),
			assert.CheckDeadline, "the 5s timeout expired while starting the server"},
		{"interrupted", bd.Run.Run(assert.RunEnd{Interrupted: &assert.Cut{When: "in phase running"}}),
			assert.CheckInterrupted, "the driver was interrupted in phase running"},
		{"setup", bd.Run.Run(assert.RunEnd{Setup: &assert.StepError{Step: "token", Error: "401"}}), assert.CheckSetup, "step token failed: 401"},
		{"launch", bd.Run.Run(assert.RunEnd{Launch: "failed"}), assert.CheckSetup, "launchThread failed"},
		{"undelivered", bd.Run.Run(assert.RunEnd{Undelivered: "the bundle ended"}), assert.CheckStreamDelivered, "the bundle ended"},
		{"nothing ended the run", bd.Run.Run(assert.RunEnd{}), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got [2]string
			if tt.got != nil {
				got = [2]string{tt.got.Check, tt.got.Seen}
			}
			if diff := cmp.Diff([2]string{tt.check, tt.want}, got); diff != "" {
				t.Errorf("failure (-want +got):\n%s", diff)
			}
		})
	}
}
