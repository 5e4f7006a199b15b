package verify_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wireproof/wireproof/verify"
)

// TestCredentialEnv: the values of credential-named variables, 8 bytes or
// longer, are a run's secrets; other variables and short values are not.
func TestCredentialEnv(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		want    []string
	}{
		{"API keys", []string{"ANTHROPIC_API_KEY=sk-ant-0123456789", "OPENAI_API_KEY=sk-proj-0123456789", "google_apikey=AIza01234567"}, []string{"sk-ant-0123456789", "sk-proj-0123456789", "AIza01234567"}},
		{"tokens and secrets", []string{"GITHUB_TOKEN=ghp_0123456789", "AWS_SESSION_TOKEN=FwoGZXIvYXdz", "CLIENT_SECRET=abcdefgh", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI", "SIGNING_PRIVATE_KEY=-----BEGIN"}, []string{"ghp_0123456789", "FwoGZXIvYXdz", "abcdefgh", "wJalrXUtnFEMI", "-----BEGIN"}},
		{"passwords", []string{"PGPASSWORD=hunter2hunter2", "DB_PASSWORD_FILE=/run/secrets/db", "MYSQL_PASSWD=12345678"}, []string{"hunter2hunter2", "/run/secrets/db", "12345678"}},
		{"not credentials", []string{"HOME=/home/someone", "PATH=/usr/bin:/bin", "AWS_ACCESS_KEY_ID=AKIA0123456789", "TOKENIZER=whitespace", "KEYBOARD=us-international"}, nil},
		{"short or empty values", []string{"ANTHROPIC_API_KEY=", "CI_TOKEN=1234567", "SOME_SECRET=true"}, nil},
		{"a value holding =", []string{"MY_TOKEN=a=b=c=d=e"}, []string{"a=b=c=d=e"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, verify.CredentialEnv(tt.environ)); diff != "" {
				t.Errorf("CredentialEnv(%q) (-want +got):\n%s", tt.environ, diff)
			}
		})
	}
}
