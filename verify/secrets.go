package verify

import (
	"encoding/json"
	"os"
	"strings"
)

// RedactEnv is the environment variable a suite hands Options.Redact to its
// runs in (a JSON array of strings), so the secrets stay off their command
// lines; the CLI reads it and removes it before the server starts.
const RedactEnv = "WIREPROOF_VERIFY_REDACT"

// MinCredentialEnvLen is the shortest value of a credential variable that is
// redacted: a shorter one ("1", "true") would be found everywhere, and is no
// key anyway.
const MinCredentialEnvLen = 8

// credentialSuffixes and credentialWords are the rule of CredentialEnvName.
var (
	credentialSuffixes = []string{"API_KEY", "APIKEY", "TOKEN", "SECRET", "SECRET_KEY", "ACCESS_KEY", "PRIVATE_KEY"}
	credentialWords    = []string{"PASSWORD", "PASSWD"}
)

// CredentialEnvName reports whether an environment variable's name says it
// holds a credential: compared without regard to case, the name ends in
// API_KEY, APIKEY, TOKEN, SECRET, SECRET_KEY, ACCESS_KEY or PRIVATE_KEY
// (ANTHROPIC_API_KEY, OPENAI_API_KEY, GITHUB_TOKEN, AWS_SESSION_TOKEN,
// CLIENT_SECRET, AWS_SECRET_ACCESS_KEY), or holds PASSWORD or PASSWD
// (PGPASSWORD, DB_PASSWORD_FILE).
func CredentialEnvName(name string) bool {
	up := strings.ToUpper(name)
	for _, s := range credentialSuffixes {
		if strings.HasSuffix(up, s) {
			return true
		}
	}
	for _, w := range credentialWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// CredentialEnv returns the values of environ's (NAME=VALUE entries, as
// os.Environ) credential variables (CredentialEnvName), each
// MinCredentialEnvLen bytes or longer: the server a run starts inherits them
// and may log them, so a run redacts them.
func CredentialEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if ok && len(value) >= MinCredentialEnvLen && CredentialEnvName(name) {
			out = append(out, value)
		}
	}
	return out
}

// runSecrets are the secrets a run redacts from the start besides its own:
// the ones the user named (Options.Redact) and the values of the credential
// variables of this process's environment, which the server inherits.
func runSecrets(opts Options) []string {
	var out []string
	for _, s := range opts.Redact {
		if s != "" {
			out = append(out, s)
		}
	}
	return append(out, CredentialEnv(os.Environ())...)
}

// suiteEnv is the environment of a suite's run: this process's, with
// secrets in RedactEnv when there are any.
func suiteEnv(secrets []string) []string {
	env := os.Environ()
	if len(secrets) == 0 {
		return env
	}
	b, _ := json.Marshal(secrets) // a []string always marshals
	return append(env, RedactEnv+"="+string(b))
}
