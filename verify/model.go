package verify

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/wireproof/wireproof/model"
	"github.com/wireproof/wireproof/model/cassette"
	"github.com/wireproof/wireproof/record"
)

// modelServer is the scripted Messages API of a real-CLI run (package
// model) and the recording proxy in front of it; url is the proxy's, the
// CLI's ANTHROPIC_BASE_URL.
type modelServer struct {
	url   string
	model *model.Server
	proxy *record.Server
}

// startModel serves the scripted model on loopback, with the run's model
// fault if it has one, or the run's model cassette, and puts a recording proxy (connections "model-h1",
// ...) in front of it.
func (r *run) startModel(ctx context.Context) (*modelServer, error) {
	fault := ""
	if isModelFault(r.opts.Fault) {
		fault = r.opts.Fault
	}
	if r.opts.ModelUpstream != "" {
		return r.proxyModel(ctx)
	}
	var srv *model.Server
	var err error
	if r.cassette != nil {
		r.tape = cassette.NewHandler(r.cassette, &cassette.Options{Fast: r.opts.ModelFast})
		if srv, err = model.Serve(ctx, "127.0.0.1:0", r.tape); err != nil {
			return nil, fmt.Errorf("serving the model cassette: %w", err)
		}
	} else if srv, err = model.Start(ctx, "127.0.0.1:0", &model.Options{Fault: fault}); err != nil {
		return nil, fmt.Errorf("starting the scripted model: %w", err)
	}
	m := &modelServer{model: srv}
	upstream, err := url.Parse(srv.URL())
	if err == nil {
		var proxy *record.Proxy
		if proxy, err = record.NewProxy(r.rec, &record.ProxyOptions{Upstream: upstream, ConnPrefix: modelConnPrefix}); err == nil {
			m.proxy, err = record.Listen(ctx, "127.0.0.1:0", proxy)
		}
	}
	if err != nil {
		srv.Close()
		return nil, err
	}
	m.url = m.proxy.URL
	return m, nil
}

// close stops the proxy, letting exchanges in flight finish until ctx ends,
// then the model (none when the model is an upstream).
func (m *modelServer) close(ctx context.Context) {
	_ = m.proxy.Close(ctx)
	if m.model != nil {
		m.model.Close()
	}
}

// proxyModel puts the recording proxy in front of Options.ModelUpstream,
// trusting Options.ModelCA's certificates besides the system's.
func (r *run) proxyModel(ctx context.Context) (*modelServer, error) {
	up, _ := url.Parse(r.opts.ModelUpstream) // checked by checkModelUpstream
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if r.opts.ModelCA != "" {
		pool, err := caPool(r.opts.ModelCA)
		if err != nil {
			return nil, err
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	proxy, err := record.NewProxy(r.rec, &record.ProxyOptions{Upstream: up, Transport: tr, ConnPrefix: modelConnPrefix})
	if err != nil {
		return nil, err
	}
	ps, err := record.Listen(ctx, "127.0.0.1:0", proxy)
	if err != nil {
		return nil, err
	}
	return &modelServer{url: ps.URL, proxy: ps}, nil
}

// upstreamKeyEnv is the variable holding the caller's key for a model
// upstream (Options.ModelUpstream): OPENAI_API_KEY for the Codex CLI (the
// Responses API), ANTHROPIC_API_KEY for the Claude Code CLI.
func upstreamKeyEnv(driver string) string {
	if driver == DriverCodex {
		return "OPENAI_API_KEY"
	}
	return "ANTHROPIC_API_KEY"
}

// caPool is the system's certificates and the PEM file's.
func caPool(path string) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &OptionError{"--model-ca", path, "a PEM file of CA certificates: " + err.Error()}
	}
	if !pool.AppendCertsFromPEM(b) {
		return nil, &OptionError{"--model-ca", path, "a PEM file of CA certificates: it holds none"}
	}
	return pool, nil
}

// PublicModelAPI is the Messages API a real-model recording
// (Options.RealModel) uses when $ANTHROPIC_BASE_URL is not set.
const PublicModelAPI = "https://api.anthropic.com"

// DefaultModelUpstream is the Messages API the user's CLI would talk to:
// $ANTHROPIC_BASE_URL (read through getenv) when set and not blank, else
// PublicModelAPI.
func DefaultModelUpstream(getenv func(string) string) string {
	if u := strings.TrimSpace(getenv("ANTHROPIC_BASE_URL")); u != "" {
		return u
	}
	return PublicModelAPI
}

// resolveModelUpstream gives a real-model recording without a named
// upstream its default (DefaultModelUpstream) and checks the upstream; a
// refused default names --real-model and, when the URL was
// $ANTHROPIC_BASE_URL, that.
func resolveModelUpstream(o Options, getenv func(string) string) (Options, error) {
	if !o.RealModel || o.ModelUpstream != "" {
		return o, checkModelUpstream(o)
	}
	o.ModelUpstream = DefaultModelUpstream(getenv)
	err := checkModelUpstream(o)
	var oe *OptionError
	if errors.As(err, &oe) && oe.Option == "--model-upstream" {
		oe.Option = "--real-model"
		if o.ModelUpstream != PublicModelAPI {
			oe.Option += " ($ANTHROPIC_BASE_URL)"
		}
	}
	return o, err
}

// checkModelUpstream refuses a model upstream that is not an http(s) URL
// with a host (or carries credentials, which would reach the manifest), one
// without the real CLI or beside the scripted model's other sources, and a
// CA file without an upstream or without a certificate.
func checkModelUpstream(o Options) error {
	if o.ModelUpstream == "" {
		if o.ModelCA != "" {
			return &OptionError{"--model-ca", o.ModelCA, "it needs --model-upstream"}
		}
		return nil
	}
	u, err := url.Parse(o.ModelUpstream)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return &OptionError{"--model-upstream", o.ModelUpstream, "an http or https URL of a Messages API, or a Responses API for the Codex CLI (https://host[:port])"}
	case u.User != nil:
		return &OptionError{"--model-upstream", "(a URL with credentials)", "no user or password in the URL: the key comes from ANTHROPIC_API_KEY (OPENAI_API_KEY for the Codex CLI)"}
	case o.ProviderCLI == "":
		return &OptionError{"--model-upstream", o.ModelUpstream, "a model upstream needs the real CLI (--provider-cli)"}
	case len(o.ModelCassette) > 0 || isModelFault(o.Fault):
		return &OptionError{"--model-upstream", o.ModelUpstream, "it replaces the scripted model: no --model-cassette or model --fault beside it"}
	}
	if o.ModelCA != "" {
		_, err := caPool(o.ModelCA)
		return err
	}
	return nil
}

// isModelFault reports whether fault is one of the scripted model's fault
// modes (model.Faults), which only a real-CLI run can play.
func isModelFault(fault string) bool { return fault != "" && model.CheckFault(fault) == nil }
