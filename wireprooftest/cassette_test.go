package wireprooftest_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/internal/testkit"
	"github.com/wireproof/wireproof/model"
	"github.com/wireproof/wireproof/wireprooftest"
)

const cassetteKey = "sk-ant-api03-wireprooftest-cassette-0123456789"

// askModel sends a real Claude CLI's requests (model/testdata/requests) to
// the Messages API through client, as code that names the API's host
// itself does, and returns each answer's body.
func askModel(t *testing.T, client *http.Client, names ...string) []string {
	t.Helper()
	var out []string
	for _, name := range names {
		body, err := os.ReadFile(filepath.Join("..", "model", "testdata", "requests", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodPost, "https://model.example/v1/messages?beta=true", bytes.NewReader(body))
		req.Header.Set("x-api-key", cassetteKey)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", name, resp.StatusCode, b)
		}
		out = append(out, string(b))
	}
	return out
}

// TestModelRecordOnce: with no bundle, the model calls are recorded
// against the real API (the scripted model here), the key redacted; with
// one, the cassette answers them the same through RoundTripper, with the
// API gone.
func TestModelRecordOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "testdata", "model.zst")
	srv, err := model.Start(context.Background(), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"idle-1-load-tools", "idle-2-delegate"}
	var recorded []string
	t.Run("first run records", func(t *testing.T) {
		base := wireprooftest.ModelRecordOnce(t, srv.URL(), path, nil)
		recorded = askModel(t, &http.Client{Transport: wireprooftest.RoundTripper(base, nil)}, names...)
	})
	srv.Close()
	if raw := testkit.Decompress(t, path); bytes.Contains(raw, []byte(cassetteKey)) || !bytes.Contains(raw, []byte("mcp__t3-code__delegate_task")) {
		t.Fatalf("the recording holds the key, or not the answers")
	}
	t.Run("next runs play the cassette", func(t *testing.T) {
		base := wireprooftest.ModelRecordOnce(t, "http://127.0.0.1:1", path, nil)
		got := askModel(t, &http.Client{Transport: wireprooftest.RoundTripper(base, nil)}, names...)
		if diff := cmp.Diff(recorded, got); diff != "" {
			t.Errorf("answers (-recorded +played):\n%s", diff)
		}
	})
	t.Run("a request the cassette never saw", func(t *testing.T) {
		base := wireprooftest.ModelCassette(t, &wireprooftest.CassetteOptions{Lenient: true}, path)
		body, err := os.ReadFile(filepath.Join("..", "model", "testdata", "requests", "idle-1-load-tools.json"))
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.Replace(body, []byte("Use T3 delegate_task"), []byte("Use T3 delegate_work"), 1)
		resp, err := http.Post(base+"/v1/messages", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b), "first difference: messages[0].content[1].text") {
			t.Errorf("%d %s", resp.StatusCode, b)
		}
	})
}
