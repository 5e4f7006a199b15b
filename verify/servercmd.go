package verify

import (
	"strconv"
	"strings"
	"unicode"
)

// checkServerCmd refuses a --server-cmd that cannot run as the server itself.
// The command is exec'd by sh in the run's work directory (so the server, not
// a shell, is the supervised process that receives SIGTERM), which makes a
// compound command ("cd /t3 && node ..."), a leading "cd" or a leading
// VAR=value assignment fail with "exec: ...: not found" (exit 127) only after
// the run has started. It names the problem before anything starts instead.
func checkServerCmd(cmd string) error {
	const want = "it is exec'd by sh as one command in the run's work directory: give the server's command alone, with absolute paths (e.g. \"node /path/to/t3code/apps/server/src/bin.ts\"), and environment through \"env VAR=value cmd\""
	if op := shellOperator(cmd); op != "" {
		return &OptionError{"--server-cmd", cmd, "it holds the shell operator " + strconv.Quote(op) + "; " + want}
	}
	first, _, _ := strings.Cut(strings.TrimSpace(cmd), " ")
	switch {
	case first == "cd":
		return &OptionError{"--server-cmd", cmd, "it starts with cd; " + want}
	case isAssignment(first):
		return &OptionError{"--server-cmd", cmd, "it starts with the assignment " + strconv.Quote(first) + "; " + want}
	}
	return nil
}

// shellOperator returns the first control operator (;, &, &&, |, ||, a
// newline) outside quotes in cmd, or "".
func shellOperator(cmd string) string {
	var quote rune
	escaped := false
	rs := []rune(cmd)
	for i, r := range rs {
		switch {
		case escaped:
			escaped = false
		case r == '\\' && quote != '\'':
			escaped = true
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == ';' || r == '\n':
			return string(r)
		case r == '&' || r == '|':
			if i+1 < len(rs) && rs[i+1] == r {
				return string(r) + string(r)
			}
			return string(r)
		}
	}
	return ""
}

// isAssignment reports whether word is a shell variable assignment NAME=...
func isAssignment(word string) bool {
	name, _, ok := strings.Cut(word, "=")
	if !ok || name == "" {
		return false
	}
	for i, r := range name {
		if !(r == '_' || unicode.IsLetter(r) && r < unicode.MaxASCII || i > 0 && unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}
