package objstore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseURL(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    URL
		wantErr bool
	}{
		{in: "s3://evidence", want: URL{Bucket: "evidence"}},
		{in: "s3://evidence/", want: URL{Bucket: "evidence"}},
		{in: "s3://evidence/nightly/abc/", want: URL{Bucket: "evidence", Key: "nightly/abc/"}},
		{in: "s3://evidence/run.zst", want: URL{Bucket: "evidence", Key: "run.zst"}},
		{in: "s3://my.bucket-1/a/b.zst", want: URL{Bucket: "my.bucket-1", Key: "a/b.zst"}},
		{in: "s3://Evidence/x", wantErr: true},
		{in: "s3://ab/x", wantErr: true},
		{in: "s3:///x", wantErr: true},
		{in: "s3://evidence//x", wantErr: true},
		{in: "s3://evidence/a/../b", wantErr: true},
		{in: "/tmp/x", wantErr: true},
	} {
		got, err := ParseURL(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseURL(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		var ue *URLError
		if err != nil && !errors.As(err, &ue) {
			t.Errorf("ParseURL(%q) error %T, want *URLError", tt.in, err)
		}
		if diff := cmp.Diff(tt.want, got); err == nil && diff != "" {
			t.Errorf("ParseURL(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestURLJoin(t *testing.T) {
	for _, tt := range []struct {
		u    URL
		rel  string
		want string
	}{
		{URL{"b-1", ""}, "x.zst", "s3://b-1/x.zst"},
		{URL{"b-1", "p"}, "x.zst", "s3://b-1/p/x.zst"},
		{URL{"b-1", "p/"}, "d/x.zst", "s3://b-1/p/d/x.zst"},
		{URL{"b-1", "p/"}, "../x.zst", "s3://b-1/p/x.zst"},
	} {
		if got := tt.u.Join(tt.rel).String(); got != tt.want {
			t.Errorf("%v.Join(%q) = %s, want %s", tt.u, tt.rel, got, tt.want)
		}
	}
}

// TestConfigResolve: endpoint and region come from the variables first, then
// from the profile's section of the shared config file.
func TestConfigResolve(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "config")
	os.WriteFile(cfgFile, []byte("[default]\nregion = eu-west-3\n\n[profile ci]\nregion = eu-north-1\nendpoint_url = http://127.0.0.1:9999\n"), 0o600)
	for _, v := range []string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"} {
		t.Setenv(v, "")
	}
	t.Setenv("AWS_CONFIG_FILE", cfgFile)
	for _, tt := range []struct {
		name string
		env  map[string]string
		want Config
	}{
		{"default profile", nil, Config{Region: "eu-west-3", Profile: "default"}},
		{"named profile", map[string]string{"AWS_PROFILE": "ci"}, Config{Endpoint: "http://127.0.0.1:9999", Region: "eu-north-1", Profile: "ci"}},
		{"variables win", map[string]string{"AWS_PROFILE": "ci", "AWS_REGION": "us-west-2", "AWS_ENDPOINT_URL": "http://127.0.0.1:1"},
			Config{Endpoint: "http://127.0.0.1:1", Region: "us-west-2", Profile: "ci"}},
		{"s3 endpoint wins", map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:1", "AWS_ENDPOINT_URL_S3": "https://127.0.0.1:2"},
			Config{Endpoint: "https://127.0.0.1:2", Region: "eu-west-3", Profile: "default"}},
		{"default region", map[string]string{"AWS_CONFIG_FILE": filepath.Join(dir, "none")}, Config{Region: "us-east-1", Profile: "default"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			got, err := Config{}.Resolve()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("bad endpoint", func(t *testing.T) {
		t.Setenv("AWS_ENDPOINT_URL", "127.0.0.1:9000")
		_, err := Config{}.Resolve()
		var ce *ConfigError
		if !errors.As(err, &ce) {
			t.Fatalf("err = %v, want *ConfigError", err)
		}
	})
}

func TestLocalBundles(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"b/2.zst", "a.zst", "b/1.zst", "notes.txt", "a-1.work/home/x.zst", "b/c.work/y.zst"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
		os.WriteFile(filepath.Join(dir, p), []byte("x"), 0o644)
	}
	l, err := NewLocation(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.Bundles(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var rels []string
	for _, e := range got {
		rels = append(rels, e.Rel)
	}
	if diff := cmp.Diff([]string{"a.zst", "b/1.zst", "b/2.zst"}, rels); diff != "" {
		t.Errorf("rels (-want +got):\n%s", diff)
	}
	// A kept workspace given itself is listed: the user asked for it.
	l, _ = NewLocation(filepath.Join(dir, "b", "c.work"), nil)
	if got, err := l.Bundles(t.Context()); err != nil || len(got) != 1 || got[0].Rel != "y.zst" {
		t.Errorf("a .work directory given itself: %v, %v", got, err)
	}
	empty := t.TempDir()
	l, _ = NewLocation(empty, nil)
	var none *NoBundlesError
	if _, err := l.Bundles(t.Context()); !errors.As(err, &none) {
		t.Errorf("empty dir: err = %v, want *NoBundlesError", err)
	}
}

// TestLocalBundlesFollowLinks: a directory given through a symbolic link is
// listed, links to directories inside are followed (each real directory
// once, so a link back up is no loop), names are the link's.
func TestLocalBundlesFollowLinks(t *testing.T) {
	base := t.TempDir()
	runs, other := filepath.Join(base, "runs"), filepath.Join(base, "other")
	os.MkdirAll(runs, 0o755)
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(runs, "a.zst"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(other, "b.zst"), []byte("x"), 0o644)
	link := filepath.Join(base, "link")
	for _, l := range [][2]string{{runs, link}, {other, filepath.Join(runs, "more")}, {runs, filepath.Join(runs, "up")}, {filepath.Join(base, "gone"), filepath.Join(runs, "dangling")}} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	l, err := NewLocation(link, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.Bundles(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range got {
		names = append(names, e.Rel+" "+e.Name)
	}
	want := []string{"a.zst " + filepath.Join(link, "a.zst"), "more/b.zst " + filepath.Join(link, "more", "b.zst")}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("bundles (-want +got):\n%s", diff)
	}
}
