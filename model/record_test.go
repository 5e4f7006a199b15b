package model_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/wireproof/wireproof/assert"
	"github.com/wireproof/wireproof/bundle"
	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/model"
	"github.com/wireproof/wireproof/protocol"
	"github.com/wireproof/wireproof/record"
	"github.com/wireproof/wireproof/replay"
)

// TestRecordedModelCalls: a Claude CLI's session (its real requests) through
// the recording proxy in front of the model, on real sockets, makes a
// bundle whose model calls all decode and pass the conformance suite, and
// whose API key is nowhere in it; with a fault the suite fails with the
// fault's check.
func TestRecordedModelCalls(t *testing.T) {
	const key = "sk-ant-api03-wireproof-model-test-0123456789"
	for _, fault := range append([]string{""}, model.Faults...) {
		t.Run("fault="+fault, func(t *testing.T) {
			s := startModel(t, fault)
			path := filepath.Join(t.TempDir(), "model.zst")
			w, err := bundle.Create(path, bundle.Header{Format: bundle.FormatVersion, Tool: "model-test", Started: time.Now().UTC()}, nil)
			if err != nil {
				t.Fatal(err)
			}
			rec := record.New(w, nil)
			up, _ := url.Parse(s.URL())
			proxy, err := record.NewProxy(rec, &record.ProxyOptions{Upstream: up})
			if err != nil {
				t.Fatal(err)
			}
			ps, err := record.Listen(context.Background(), "127.0.0.1:0", proxy)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 5; i++ {
				names := []string{"idle-1-load-tools", "idle-2-delegate", "idle-3-release", "idle-4-wake", "idle-5-ack"}
				req, _ := http.NewRequest(http.MethodPost, ps.URL+"/v1/messages?beta=true", bytes.NewReader(requestBody(t, names[i-1])))
				req.Header.Set("x-api-key", key)
				resp, err := client.Do(req)
				if err != nil {
					if fault != model.FaultStreamCut {
						t.Fatal(err)
					}
					continue // the proxy passes the cut on before the response's head reached the client
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			if err := ps.Close(context.Background()); err != nil {
				t.Error(err)
			}
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
			calls := 0
			res, err := replay.ReplayFile(context.Background(), path, &replay.Options{Engine: &replay.EngineOptions{OnEvent: func(pe *protocol.Event) {
				if pe.Protocol == protocol.Anthropic && pe.Kind == protocol.KindResponse {
					calls++
				}
			}}})
			if err != nil {
				t.Fatal(err)
			}
			if calls != 5 {
				t.Errorf("%d model calls answered in the bundle, want 5", calls)
			}
			var conf *assert.SuiteResult
			for i := range res.Verdict.Suites {
				if res.Verdict.Suites[i].Suite == assert.SuiteConformance {
					conf = &res.Verdict.Suites[i]
				}
			}
			switch {
			case conf == nil:
				t.Fatalf("no conformance suite in %+v", res.Verdict)
			case fault == "" && conf.Failure != nil:
				t.Errorf("conformance failed: %+v", conf.Failure)
			case fault != "" && (conf.Failure == nil || conf.Failure.Check != model.FaultChecks[fault]):
				t.Errorf("conformance %+v, want %s to fail", conf.Failure, model.FaultChecks[fault])
			}
			if raw := testkit.Decompress(t, path); bytes.Contains(raw, []byte(key)) {
				t.Errorf("the API key is in the bundle")
			}
		})
	}
}
