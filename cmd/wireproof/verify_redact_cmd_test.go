package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/internal/spelling"
)

// TestVerifyRedactsServersSecrets: a real server (a script that prints its
// secrets in every spelling, then execs the fixture) is given credential
// variables in its inherited environment and, with --redact, a secret it
// was never given but logs; no spelling of any of them, nor of a piece of
// one, reaches the bundle, its readers, the verdict or results.json. A
// suite hands --redact to its runs off their command line, and the server
// does not inherit it.
func TestVerifyRedactsServersSecrets(t *testing.T) {
	type secret struct{ name, value, core string } // name "": a --redact value
	anthropic := secret{"ANTHROPIC_API_KEY", "sk-ant-api03-wpLeakAnthropic0123456789", "wpLeakAnthropic"}
	openai := secret{"OPENAI_API_KEY", "sk-proj-wpLeakOpenAI9876543210", "wpLeakOpenAI"}
	aws := secret{"AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYwpLeakAWS", "bPxRfiCYwpLeak"}
	service := secret{"attack_secret", "sk-attack-wpLeakService-1234567890", "wpLeakService"}
	password := secret{"PGPASSWORD", "hunter2-wpLeakPassword", "wpLeakPassword"}
	named := secret{"", "wp-named-wpLeakNamed-QQQ", "wpLeakNamed"}
	named2 := secret{"", "another-wpLeakOther-secret", "wpLeakOther"}
	tests := []struct {
		name    string
		flags   []string // besides --scenario idle
		secrets []secret
		suite   bool
	}{
		{"environment's credentials", nil, []secret{anthropic, openai, aws, service, password}, false},
		{"--redact", nil, []secret{named, anthropic}, false},
		{"--redact in a suite", []string{"--repeat", "2"}, []secret{named, named2, openai}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var leak strings.Builder
			var env, args []string
			for _, s := range tt.secrets {
				for _, sp := range spelling.Names {
					leak.WriteString(spelling.Spell(s.value, sp) + "\n")
				}
				leak.WriteString(strings.Join(spelling.Base64Stable(s.value), " ") + "\n")
				if s.name == "" {
					args = append(args, "--redact", s.value)
				} else {
					env = append(env, s.name+"="+s.value)
				}
			}
			leakFile := filepath.Join(dir, "leak.txt")
			writeFile(t, leakFile, leak.String())
			// The server prints every spelling on stdout and stderr, writes
			// its environment and its parent's (verify's) command line
			// beside them, then execs the fixture, which logs its own.
			script := filepath.Join(dir, "server.sh")
			writeFile(t, script, "cat "+leakFile+"\ncat "+leakFile+" >&2\n"+
				"env > "+dir+"/env-$$.txt\ntr '\\0' ' ' </proc/$PPID/cmdline > "+dir+"/cmdline-$$.txt\n"+
				"echo \"ANTHROPIC_API_KEY=$ANTHROPIC_API_KEY OPENAI_API_KEY=$OPENAI_API_KEY\"\n"+
				"exec "+wireproofBin+" fixture \"$@\"\n")
			out := filepath.Join(dir, "out")
			argv := append([]string{"verify", "--scenario", "idle", "--out", out, "--server-cmd", "sh " + script}, append(tt.flags, args...)...)
			code, stdout, stderr := runBinEnv(t, env, argv...)
			if code != exitOK {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitOK, stdout, stderr)
			}
			bundles, _ := filepath.Glob(filepath.Join(out, "*.zst"))
			jsons, _ := filepath.Glob(filepath.Join(out, "*.json"))
			if want := 1; tt.suite {
				want = 2
				if len(bundles) != want || len(jsons) != want+1 {
					t.Fatalf("out holds bundles %q and json %q, want %d bundles, their verdicts and results.json", bundles, jsons, want)
				}
			} else if len(bundles) != want {
				t.Fatalf("out holds bundles %q, want %d", bundles, want)
			}
			for _, s := range tt.secrets {
				for _, b := range bundles {
					checkNoLeak(t, b, s.value, s.core)
				}
				for _, f := range jsons {
					checkNoSpelling(t, f, s.value, s.core)
				}
				checkNoSpelling(t, "verify's output", s.value, s.core, stdout+stderr)
			}
			// What the server was given: its environment holds no --redact
			// value, nor does its parent's command line in a suite (a single
			// run's is the user's own).
			pattern := "env-*.txt"
			if tt.suite {
				pattern = "*-*.txt"
			}
			given, _ := filepath.Glob(filepath.Join(dir, pattern))
			if len(given) == 0 {
				t.Fatal("the server wrote no env or cmdline file")
			}
			for _, f := range given {
				for _, s := range tt.secrets {
					if s.name == "" {
						checkNoSpelling(t, f, s.value, s.core)
					}
				}
			}
		})
	}
}

// checkNoSpelling fails if the file at path (or text, when given) holds
// secret or core in any spelling.
func checkNoSpelling(t *testing.T, path, secret, core string, text ...string) {
	t.Helper()
	s := strings.Join(text, "")
	if text == nil {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s = string(b)
	}
	lo := strings.ToLower(s)
	needles := spelling.Base64Stable(secret)
	for _, sp := range spelling.Names {
		needles = append(needles, spelling.Spell(secret, sp), spelling.Spell(core, sp))
	}
	for _, n := range needles {
		if i := strings.Index(lo, strings.ToLower(n)); i >= 0 {
			t.Errorf("%s holds %q: ...%s...", path, n, s[max(0, i-60):min(len(s), i+len(n)+60)])
		}
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
