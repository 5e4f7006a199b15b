package objstore

import (
	"fmt"
	"path"
	"strings"
)

// Scheme prefixes an object-storage location.
const Scheme = "s3://"

// IsRemote reports whether arg names an object-storage location.
func IsRemote(arg string) bool { return strings.HasPrefix(arg, Scheme) }

// URL is a parsed s3://bucket/key location. Key may be empty (the whole
// bucket), a prefix ("runs/2026-11-30/") or one object's key.
type URL struct {
	Bucket string
	Key    string
}

// ParseURL parses s3://bucket[/key]. The bucket must follow S3's naming rules
// (3 to 63 lower-case letters, digits, dots and hyphens).
func ParseURL(s string) (URL, error) {
	if !IsRemote(s) {
		return URL{}, &URLError{URL: s, Msg: "does not start with " + Scheme}
	}
	rest := strings.TrimPrefix(s, Scheme)
	bucket, key, _ := strings.Cut(rest, "/")
	if err := checkBucket(bucket); err != nil {
		return URL{}, &URLError{URL: s, Msg: err.Error()}
	}
	if strings.Contains(key, "//") || strings.HasPrefix(key, "/") {
		return URL{}, &URLError{URL: s, Msg: "the key has an empty path segment"}
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "." || seg == ".." {
			return URL{}, &URLError{URL: s, Msg: "the key has a . or .. segment"}
		}
	}
	return URL{Bucket: bucket, Key: key}, nil
}

func checkBucket(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("bucket name %q must be 3 to 63 characters", b)
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return fmt.Errorf("bucket name %q may hold only lower-case letters, digits, dots and hyphens", b)
		}
	}
	return nil
}

// String is the s3:// form.
func (u URL) String() string { return Scheme + u.Bucket + "/" + u.Key }

// Dir is the key as a prefix: empty or ending in "/".
func (u URL) Dir() string {
	if u.Key == "" || strings.HasSuffix(u.Key, "/") {
		return u.Key
	}
	return u.Key + "/"
}

// Join is the location of rel (a slash-separated relative path) under u taken
// as a prefix.
func (u URL) Join(rel string) URL {
	return URL{Bucket: u.Bucket, Key: u.Dir() + strings.TrimPrefix(path.Clean("/"+rel), "/")}
}

// URLError is an s3:// argument that cannot be used.
type URLError struct {
	URL string
	Msg string
}

func (e *URLError) Error() string { return fmt.Sprintf("invalid location %s: %s", e.URL, e.Msg) }
