package cliwrap_test

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/internal/testkit"
)

func TestMain(m *testing.M) {
	testkit.Main(m, &testkit.Options{Helpers: map[string]func() int{"fakecli": fakeCLI, "sleeper": sleeper}})
}

// fakeCLI stands in for a provider CLI: it writes its arguments and the
// environment that matters to stderr, answers every stdin line with one
// stdout line, and exits 3 at stdin's end.
func fakeCLI() int {
	args := os.Args[2:] // after -test.run=^$
	fmt.Fprintf(os.Stderr, "args %q\n", args)
	fmt.Fprintf(os.Stderr, "HOME=%s CLAUDE_CONFIG_DIR=%s CODEX_HOME=%s TMPDIR=%s token=%q openai=%q\n", os.Getenv("HOME"), os.Getenv("CLAUDE_CONFIG_DIR"), os.Getenv("CODEX_HOME"), os.Getenv("TMPDIR"), os.Getenv("CLAUDE_CODE_OAUTH_TOKEN"), os.Getenv("OPENAI_API_KEY"))
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		fmt.Printf("{\"echo\":%q}\n", strings.ToUpper(sc.Text()))
	}
	fmt.Print("no newline at the end")
	return 3
}

// sleeper says it is up, then waits for a signal that kills it.
func sleeper() int {
	fmt.Println(`{"type":"up"}`)
	select {}
}
