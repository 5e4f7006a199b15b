// Package s3test gives tests a prefix of their own in a real S3-compatible
// bucket. .ci/run starts a server on loopback (.ci/s3.sh) and sets the
// standard variables (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_REGION) and WIREPROOF_TEST_S3_BUCKET; without
// them the tests skip, unless WIREPROOF_TEST_S3_REQUIRED is set (CI), when
// they fail.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/wireproof/wireproof/internal/objstore"
)

// Environment variables the tests read besides the standard AWS ones.
const (
	EnvBucket   = "WIREPROOF_TEST_S3_BUCKET"
	EnvRequired = "WIREPROOF_TEST_S3_REQUIRED"
)

// Prefix returns a client for the test server and a fresh, empty prefix
// (s3://BUCKET/t/<test>-<random>/) for this test alone.
func Prefix(t testing.TB) (*objstore.Client, objstore.URL) {
	t.Helper()
	bucket := os.Getenv(EnvBucket)
	endpoint := os.Getenv("AWS_ENDPOINT_URL")
	if bucket == "" || endpoint == "" {
		msg := "no S3-compatible server: set AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and " + EnvBucket + " (bash .ci/s3.sh start prints them)"
		if os.Getenv(EnvRequired) != "" {
			t.Fatal(msg + "; " + EnvRequired + " is set, so this is a failure")
		}
		t.Skip(msg)
	}
	c, err := objstore.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckBucket(context.Background(), bucket); err != nil {
		t.Fatalf("the test bucket: %v", err)
	}
	var b [4]byte
	rand.Read(b[:])
	name := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	return c, objstore.URL{Bucket: bucket, Key: "t/" + name + "-" + hex.EncodeToString(b[:]) + "/"}
}

// Secret is the secret key the tests use, to prove it appears nowhere.
func Secret() string { return os.Getenv("AWS_SECRET_ACCESS_KEY") }
