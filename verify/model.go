package verify

import (
	"context"
	"fmt"
	"net/url"

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
// then the model.
func (m *modelServer) close(ctx context.Context) {
	_ = m.proxy.Close(ctx)
	m.model.Close()
}

// isModelFault reports whether fault is one of the scripted model's fault
// modes (model.Faults), which only a real-CLI run can play.
func isModelFault(fault string) bool { return fault != "" && model.CheckFault(fault) == nil }
