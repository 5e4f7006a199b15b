package synth

import (
	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/delivery"
	"github.com/wireproof/wireproof/replay"
)

// InapplicableProvider is the synthetic provider driver Inapplicable's
// pair names.
const InapplicableProvider assert.Provider = "acme"

// InapplicableReason is the reason Inapplicable gives.
const InapplicableReason = "native cannot apply to acme: acme has no background work of its own; verify acme with idle."

// Inapplicable is background delivery with one synthetic pair that does not
// apply, native on InapplicableProvider: how a not-applicable run is
// decided and shown, tested apart from what delivery.NotApplicable
// registers (no pair today). Pass it as a scenario (EngineOptions) or as an
// options struct's Delivery.
func Inapplicable() delivery.Spec {
	return delivery.Spec{Checks: assert.BackgroundDelivery, NotApplicable: []assert.NotApplicable{
		{Scenario: assert.ScenarioNative, Provider: InapplicableProvider, Reason: InapplicableReason}}}
}

// InapplicableOptions are engine options whose one scenario is
// Inapplicable's.
func InapplicableOptions() *replay.EngineOptions {
	return &replay.EngineOptions{Scenarios: []replay.Scenario{Inapplicable().Scenario()}}
}

// WriteInapplicable writes at path the bundle verify records of a run that
// does not apply under Inapplicable (native on InapplicableProvider): the
// header, the done mark and the verdict, nothing driven.
func WriteInapplicable(path string) error {
	evs, err := RecordedBy(NotDriven(Options{Scenario: assert.ScenarioNative, Provider: InapplicableProvider}), InapplicableOptions())
	if err != nil {
		return err
	}
	return WriteBundle(path, evs)
}
