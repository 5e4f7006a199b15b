package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/internal/objstore"
)

// TestStorageHint: an unreachable endpoint gets a line saying what to check,
// and with no endpoint configured it says that AWS S3 itself was asked.
func TestStorageHint(t *testing.T) {
	unreachable := func(endpoint string) error {
		return fmt.Errorf("listing: %w", &objstore.Error{Op: "list", URL: "s3://evidence/", Endpoint: endpoint, Reason: objstore.ReasonUnreachable})
	}
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"no endpoint", unreachable("AWS S3 (us-east-1)"), "no endpoint is configured, so this went to AWS S3: for an S3-compatible service set AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL (or the profile's endpoint_url) to its http(s)://host:port"},
		{"endpoint down", unreachable("http://127.0.0.1:9000"), "is the service at http://127.0.0.1:9000 running? (the endpoint comes from AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL or the profile's endpoint_url)"},
		{"refused credentials", &objstore.Error{Endpoint: "http://127.0.0.1:9000", Reason: objstore.ReasonAuth}, ""},
		{"not storage", errors.New("boom"), ""},
	}
	for _, tc := range tests {
		if got := storageHint(tc.err); got != tc.want {
			t.Errorf("%s: storageHint = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestStorageUnreachableCLI runs replay against a loopback endpoint nothing
// listens on: exit 5, the error, then the hint naming the endpoint.
func TestStorageUnreachableCLI(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := "http://" + ln.Addr().String()
	ln.Close()
	cmd := exec.Command(wireproofBin, "replay", "s3://evidence/nightly/")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "AWS_ENDPOINT_URL_S3="+endpoint, "AWS_ENDPOINT_URL="+endpoint,
		"AWS_ACCESS_KEY_ID=wireproof-test", "AWS_SECRET_ACCESS_KEY=wireproof-test-secret", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if code := exitStatus(t, cmd.Run()); code != exitStorage {
		t.Errorf("exit code %d, want %d; stderr:\n%s", code, exitStorage, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "unreachable") ||
		lines[1] != "wireproof: is the service at "+endpoint+" running? (the endpoint comes from AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL or the profile's endpoint_url)" {
		t.Errorf("stderr is not the error and the hint:\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), "wireproof-test-secret") {
		t.Errorf("stderr holds the secret key:\n%s", stderr.String())
	}
}
