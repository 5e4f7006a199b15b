package model_test

import (
	"testing"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/model"
)

// TestFaultChecksExist: every fault mode names a conformance check of the
// catalogue (the check replay names when the fault fails a run).
func TestFaultChecksExist(t *testing.T) {
	if len(model.FaultChecks) != len(model.Faults) {
		t.Errorf("%d fault modes, %d with a check", len(model.Faults), len(model.FaultChecks))
	}
	for _, f := range model.Faults {
		id := model.FaultChecks[f]
		c, ok := assert.Lookup(id)
		if !ok || c.Suite != assert.SuiteConformance {
			t.Errorf("fault %s names check %q, which is no conformance check (%+v)", f, id, c)
		}
	}
}
