package objstore

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/ini.v1"
)

// Config says how to reach the object store. Resolve fills it from the
// standard chain; tests and embedders may set it directly.
type Config struct {
	// Endpoint is the service URL (http://127.0.0.1:8333). Empty means AWS S3
	// itself, over HTTPS, with virtual-host addressing.
	Endpoint string
	// Region is the signing region; default us-east-1.
	Region string
	// Profile is the shared-files profile credentials are read from; empty
	// means AWS_PROFILE, then "default".
	Profile string
}

// Resolve fills the endpoint, region and profile of a Config from the
// environment and the profile's section of the shared config file, leaving
// fields already set alone.
func (c Config) Resolve() (Config, error) {
	getenv := os.Getenv
	if c.Profile == "" {
		c.Profile = getenv("AWS_PROFILE")
	}
	if c.Profile == "" {
		c.Profile = "default"
	}
	prof := configProfile(getenv, c.Profile)
	if c.Endpoint == "" {
		c.Endpoint = firstNonEmpty(getenv("AWS_ENDPOINT_URL_S3"), getenv("AWS_ENDPOINT_URL"), prof["endpoint_url"])
	}
	if c.Region == "" {
		c.Region = firstNonEmpty(getenv("AWS_REGION"), getenv("AWS_DEFAULT_REGION"), prof["region"], "us-east-1")
	}
	if c.Endpoint != "" {
		if _, _, err := c.endpoint(); err != nil {
			return c, err
		}
	}
	return c, nil
}

// endpoint splits Endpoint into a host and whether it is HTTPS.
func (c Config) endpoint() (host string, secure bool, err error) {
	if c.Endpoint == "" {
		return "s3.amazonaws.com", true, nil
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || (u.Path != "" && u.Path != "/") {
		return "", false, &ConfigError{Msg: fmt.Sprintf("endpoint %q (from AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL or endpoint_url) must be http(s)://host[:port]", c.Endpoint)}
	}
	return u.Host, u.Scheme == "https", nil
}

// configProfile reads the profile's section of the shared config file
// (AWS_CONFIG_FILE or ~/.aws/config): "[default]" or "[profile NAME]".
// A missing or unreadable file is an empty profile.
func configProfile(getenv func(string) string, profile string) map[string]string {
	file := getenv("AWS_CONFIG_FILE")
	if file == "" {
		home := getenv("HOME")
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		if home == "" {
			return nil
		}
		file = filepath.Join(home, ".aws", "config")
	}
	f, err := ini.Load(file)
	if err != nil {
		return nil
	}
	name := "profile " + profile
	if profile == "default" && !f.HasSection(name) {
		name = "default"
	}
	if !f.HasSection(name) {
		return nil
	}
	out := map[string]string{}
	for _, k := range f.Section(name).Keys() {
		out[strings.ToLower(k.Name())] = k.String()
	}
	return out
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// ConfigError is a setting of the chain that cannot be used.
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return "object storage: " + e.Msg }
