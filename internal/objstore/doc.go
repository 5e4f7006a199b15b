// Package objstore is where bundles live: a local file or directory, or an
// S3-compatible bucket and prefix (s3://bucket/prefix). A Location lists its
// bundles in sorted order, opens one as a stream, and an S3 location uploads
// finished files (multipart for large ones, the digest checked afterwards,
// retried with backoff).
//
// Credentials and the endpoint come from the chain AWS tools use: the
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN variables,
// then the shared config and credentials files (AWS_PROFILE,
// AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE, ~/.aws/config,
// ~/.aws/credentials); the region from AWS_REGION, AWS_DEFAULT_REGION or the
// profile; the endpoint from AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL or the
// profile's endpoint_url. A custom endpoint is addressed path-style, as
// S3-compatible services expect. No secret ever appears in an error.
package objstore
