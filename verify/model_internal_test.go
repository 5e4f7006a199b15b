package verify

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestResolveModelUpstream: a real-model recording without a named
// upstream takes $ANTHROPIC_BASE_URL when set, else the public API; a
// named one wins; without RealModel nothing is defaulted; a bad
// $ANTHROPIC_BASE_URL is refused naming where it came from. No network.
func TestResolveModelUpstream(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		baseURL string
		want    string
		errOpt  string // the OptionError's option, "" for none
	}{
		{name: "public API by default", opts: Options{RealModel: true, ProviderCLI: "claude"}, want: PublicModelAPI},
		{name: "the user's ANTHROPIC_BASE_URL", opts: Options{RealModel: true, ProviderCLI: "claude"}, baseURL: "https://gateway.example:8443/anthropic", want: "https://gateway.example:8443/anthropic"},
		{name: "a blank ANTHROPIC_BASE_URL is unset", opts: Options{RealModel: true, ProviderCLI: "claude"}, baseURL: "  ", want: PublicModelAPI},
		{name: "--model-upstream names another", opts: Options{RealModel: true, ProviderCLI: "claude", ModelUpstream: "https://other.example"}, baseURL: "https://gateway.example", want: "https://other.example"},
		{name: "--model-upstream alone", opts: Options{ProviderCLI: "claude", ModelUpstream: "http://127.0.0.1:9"}, baseURL: "https://gateway.example", want: "http://127.0.0.1:9"},
		{name: "no real model: the scripted one", opts: Options{ProviderCLI: "claude"}, baseURL: "https://gateway.example", want: ""},
		{name: "a bad ANTHROPIC_BASE_URL", opts: Options{RealModel: true, ProviderCLI: "claude"}, baseURL: "gateway.example", want: "gateway.example", errOpt: "--real-model ($ANTHROPIC_BASE_URL)"},
		{name: "credentials in ANTHROPIC_BASE_URL", opts: Options{RealModel: true, ProviderCLI: "claude"}, baseURL: "https://u:p@gateway.example", want: "https://u:p@gateway.example", errOpt: "--real-model ($ANTHROPIC_BASE_URL)"},
		{name: "a real model needs the real CLI", opts: Options{RealModel: true}, want: PublicModelAPI, errOpt: "--real-model"},
		{name: "a real model beside a cassette", opts: Options{RealModel: true, ProviderCLI: "claude", ModelCassette: []string{"tape"}}, baseURL: "https://gateway.example", want: "https://gateway.example", errOpt: "--real-model ($ANTHROPIC_BASE_URL)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == "ANTHROPIC_BASE_URL" {
					return tc.baseURL
				}
				return ""
			}
			got, err := resolveModelUpstream(tc.opts, getenv)
			if diff := cmp.Diff(tc.want, got.ModelUpstream); diff != "" {
				t.Errorf("ModelUpstream (-want +got):\n%s", diff)
			}
			var oe *OptionError
			switch {
			case tc.errOpt == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.errOpt != "" && (!errors.As(err, &oe) || oe.Option != tc.errOpt):
				t.Errorf("error %v, want an OptionError of %s", err, tc.errOpt)
			}
		})
	}
}
