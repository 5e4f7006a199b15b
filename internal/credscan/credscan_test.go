package credscan

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/wireproof/wireproof/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m, nil) }

func kinds(text string) []string {
	var out []string
	for _, f := range Find([]byte(text)) {
		out = append(out, f.Kind+"="+text[f.Start:f.End])
	}
	return out
}

func TestFind(t *testing.T) {
	tests := []struct {
		name, text string
		want       []string
	}{
		{"openai in an env file", "+OPENAI_API_KEY=sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789", []string{"openai-key=sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789"}},
		{"anthropic", `{"key":"sk-ant-api03-AbCdEfGhIjKlMnOp_qrst-0123"}`, []string{"anthropic-key=sk-ant-api03-AbCdEfGhIjKlMnOp_qrst-0123"}},
		{"github", "token ghp_0123456789abcdefABCDEF0123456789abcd here", []string{"github-token=ghp_0123456789abcdefABCDEF0123456789abcd"}},
		{"aws", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", []string{"aws-access-key=AKIAIOSFODNN7EXAMPLE"}},
		{"slack", "SLACK=xoxb-1234567890-abcdefghij", []string{"slack-token=xoxb-1234567890-abcdefghij"}},
		{"jwt", "id eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
			[]string{"jwt=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"}},
		{"bearer header", `"Authorization":["Bearer abc123def456ghi"]`, []string{"bearer=abc123def456ghi"}},
		{"named", `db_password: "hunter2hunter2x9"`, []string{"named-secret=hunter2hunter2x9"}},
		{"named flag", "--api-key k3y-v4lu3-0000", []string{"named-secret=k3y-v4lu3-0000"}},
		{"high entropy", "session Zm9vYmFyQmF6UXV4MTIzNDU2Nzg5MGFiY2RlZg9Xq", []string{"high-entropy=Zm9vYmFyQmF6UXV4MTIzNDU2Nzg5MGFiY2RlZg9Xq"}},
		{"high entropy after a name", "session=Zm9vYmFyQmF6UXV4MTIzNDU2Nzg5MGFiY2RlZg9Xq==", []string{"high-entropy=Zm9vYmFyQmF6UXV4MTIzNDU2Nzg5MGFiY2RlZg9Xq"}},
		{"private key", "-----BEGIN OPENSSH PRIVATE KEY-----", []string{"private-key=-----BEGIN OPENSSH PRIVATE KEY-----"}},
		// What does not count.
		{"placeholder", `"subject_token":"[REDACTED]" Authorization: Bearer [REDACTED] OPENAI_API_KEY=[REDACTED]`, nil},
		{"a uuid and a digest", `"threadId":"c793f158-db2f-4d87-a00c-ef0da6e308d4","sha256":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"`, nil},
		{"words after a name", `"tokenFields": "access_token", password: required, "secret": "delivered"`, nil},
		{"names made of words", `'39_ProjectionProjectsDefaultThreadEnvMode', migration 0012_AddThreadSessionIndexesV2, '45_OrchestrationV2ThreadLaunchWorkflows', MCPServerConnectionTimeout3`, nil},
		{"a long base64 payload", strings.Repeat("QWxhZGRpbjpvcGVuIHNlc2FtZQ9x", 10), nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, kinds(tt.text)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestMaskAndExcerpt(t *testing.T) {
	text := []byte("line one\nOPENAI_API_KEY=sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123456789 and more")
	fs := Find(text)
	if len(fs) != 1 {
		t.Fatalf("findings %v", fs)
	}
	ex := Excerpt(text, fs, fs[0], 16)
	if strings.Contains(ex, "AbCdEfGh") || !strings.Contains(ex, "OPENAI_API_KEY=sk-p************(42 bytes)") || strings.Contains(ex, "\n") {
		t.Errorf("excerpt %q", ex)
	}
	if got := string(Redact(text)); got != "line one\nOPENAI_API_KEY=[REDACTED] and more" {
		t.Errorf("Redact = %q", got)
	}
}

// TestGoldenCorpusIsClean: the recordings wireproof ships hold no
// credential-looking string (their tokens are redacted); a detector that
// flags them would make scan useless.
func TestGoldenCorpusIsClean(t *testing.T) {
	for _, p := range []string{"../../fixtures/golden/idle.verdict.json", "../../fixtures/golden/live/idle.verdict.json"} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range Find(b) {
			t.Errorf("%s: %s %q", p, f.Kind, b[f.Start:f.End])
		}
	}
}

// TestNotCounted: what stands where a credential could and is none.
func TestNotCounted(t *testing.T) {
	for _, text := range []string{
		`"secret":"RESULT_5b1e0c1e-3f57-4e0e-9d39-3b0f3c1f6a10"`,
		// The nonce in a command's output quoted in a JSON string, as a
		// Codex request carries it, and quoted twice.
		`"output":"Process exited with code 0\nWall time: 0.1 seconds\nOutput:\nRESULT_a936da85-4839-4c71-9fca-9ca6cef1218b"`,
		`"text":"{\"output\":\"Output:\\nRESULT_a936da85-4839-4c71-9fca-9ca6cef1218b\"}"`,
		`grant_type=x&requested_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token`,
		`"token_type":"Bearer"`,
		`path=/oauth/token status=200 duration=3.1ms`,
		`"Sec-Websocket-Key":["rGn5Zq1s0dVbqeYhO+Rr9w=="]`,
		`msg="provider from settings" binaryPath=/tmp/wireproof-run-25234-499106-1220870557/bin/claude`,
		`/home/Dev/Projects/WireProof/cmd/wireproof/Main_test.go`,
		// The real Claude CLI's init message says where its key came from:
		// the variable's name, not its value.
		`"apiKeySource":"ANTHROPIC_API_KEY","apiProvider":"firstParty"`,
	} {
		if got := kinds(text); got != nil {
			t.Errorf("%s: %v", text, got)
		}
	}
}

// BenchmarkFind: a projection-sized body of JSON with credential names in it.
func BenchmarkFind(b *testing.B) {
	text := []byte(strings.Repeat(`{"kind":"event","token":"[REDACTED]","text":"a line of ordinary words and ids c793f158-db2f-4d87"},`, 2000))
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Find(text)
	}
}
