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
// their nearest reachable form is the suite called directly.
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
			if f := s.MainChecks(p, assert.Facts{Released: true}); f != nil {
				got = f.Check
			}
			if got != tt.want {
				t.Errorf("MainChecks failed %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRestartAcknowledgementDiff(t *testing.T) {
	s := assert.Suite{Secret: "S"}
	body := `{"projection":{"messages":[{"id":"m1","role":"assistant","text":"ACK:S"},{"id":"m9","role":"assistant","text":"ACK:S"}],"runs":[]}}`
	f := s.RestartChecks(assert.RestartRead{Status: 200, Body: []byte(body)}, 0, []string{"m1"})
	if f == nil || f.Check != assert.CheckRestartAcknowledgement {
		t.Fatalf("failure = %+v, want restart-acknowledgement", f)
	}
	want := " \t\"m1\"\n+\t\"m9\"\n"
	if diff := cmp.Diff(want, f.Diff); diff != "" {
		t.Errorf("diff text (-want +got):\n%s", diff)
	}
}
