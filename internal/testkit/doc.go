// Package testkit holds what the tests of every wireproof package share, so
// that each is written once:
//
//   - Main, the TestMain of a package: it runs a helper mode when the test
//     binary was re-executed as a child process (HelperCommand), and after
//     the tests fails the binary if a goroutine (go.uber.org/goleak) or a
//     child process the tests started is still running;
//   - CheckLeaks, the same two checks around one test;
//   - Update and Golden, the -update flag and the compare-with-testdata
//     helper of golden files;
//   - Missing, which skips a test whose requirement (a browser, Node.js)
//     is missing, or fails it where CI says the requirement is installed
//     (EnvBrowserRequired, EnvNodeRequired).
//
// Only _test.go files import it (a test in fixtures/corpus guards that the
// wireproof binary does not link it).
package testkit
