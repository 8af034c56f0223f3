package artifacts

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/s3blob" // registers the s3 scheme with blob.OpenBucket
)

// DefaultMaxObjectSize bounds one artifact. Traces, screenshots and git bundles run to
// megabytes; 512 MiB leaves them room to grow while stopping a runaway producer from filling
// the bucket or the spool disk.
const DefaultMaxObjectSize int64 = 512 << 20

// Option adjusts Open.
type Option func(*options)

type options struct {
	maxObjectSize int64
}

// WithMaxObjectSize sets the largest content Put accepts and Get serves, in bytes.
func WithMaxObjectSize(n int64) Option {
	return func(o *options) { o.maxObjectSize = n }
}

// Open opens the store a URL names:
//
//   - file:///abs/path keeps everything under one local directory (created if missing): the
//     one-machine default. It takes no query parameters.
//   - s3://bucket?endpoint=http://host:port&region=us-east-1&use_path_style=true reaches S3 or
//     any S3-compatible server (R2, GCS interoperability, SeaweedFS). The query is gocloud's
//     s3blob URL format (region, endpoint, use_path_style, disable_https, profile,
//     request_checksum_calculation, ...; prefix= keeps the store under a key prefix).
//     Credentials come from the standard AWS environment variables or shared config, never
//     from the URL. The bucket must exist: Open checks that it can reach it.
//
// Any other scheme is refused.
func Open(ctx context.Context, rawURL string, opts ...Option) (Store, error) {
	o := options{maxObjectSize: DefaultMaxObjectSize}
	for _, opt := range opts {
		opt(&o)
	}
	if o.maxObjectSize <= 0 {
		return nil, fmt.Errorf("artifacts: open: maximum object size must be positive, got %d", o.maxObjectSize)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("artifacts: open: parse store URL: %w", err)
	}
	switch u.Scheme {
	case "file":
		return openFile(u, o)
	case "s3":
		return openS3(ctx, u, o)
	default:
		return nil, fmt.Errorf("artifacts: open %s: unsupported scheme %q: use file:///abs/path or s3://BUCKET?QUERY", u.Redacted(), u.Scheme)
	}
}

func openFile(u *url.URL, o options) (Store, error) {
	where := u.Redacted()
	if u.Host != "" && u.Host != "localhost" {
		return nil, fmt.Errorf("artifacts: open %s: a file URL names a local directory: want file:///abs/path", where)
	}
	if u.RawQuery != "" {
		return nil, fmt.Errorf("artifacts: open %s: file URLs take no query parameters", where)
	}
	if !filepath.IsAbs(u.Path) {
		return nil, fmt.Errorf("artifacts: open %s: the directory must be an absolute path", where)
	}
	dir := filepath.Clean(u.Path)
	// NoTempDir: fileblob writes each object to a temporary file and renames it into place;
	// beside the target that rename stays on one file system (os.TempDir may be another mount).
	// MetadataDontWrite: no ".attrs" sidecar per object; the store keeps no metadata but bytes.
	b, err := fileblob.OpenBucket(dir, &fileblob.Options{
		CreateDir: true,
		NoTempDir: true,
		Metadata:  fileblob.MetadataDontWrite,
	})
	if err != nil {
		return nil, fmt.Errorf("artifacts: open %s: %w", where, err)
	}
	return &bucketStore{
		bucket:     b,
		where:      "file://" + dir,
		maxSize:    o.maxObjectSize,
		createOnce: hardLinkCreate(dir),
	}, nil
}

func openS3(ctx context.Context, u *url.URL, o options) (Store, error) {
	where := u.Redacted()
	if u.Host == "" {
		return nil, fmt.Errorf("artifacts: open %s: the URL names no bucket: want s3://BUCKET?QUERY", where)
	}
	if u.User != nil {
		return nil, fmt.Errorf("artifacts: open %s: credentials in the URL are refused; use the AWS environment variables", where)
	}
	b, err := blob.OpenBucket(ctx, u.String())
	if err != nil {
		return nil, fmt.Errorf("artifacts: open %s: %w", where, err)
	}
	// gocloud opens lazily; ask once now so a wrong endpoint, bucket or credential fails here
	// rather than at a worker's first artifact.
	ok, err := b.IsAccessible(ctx)
	if err == nil && !ok {
		err = errors.New("bucket does not exist")
	}
	if err != nil {
		_ = b.Close()
		return nil, fmt.Errorf("artifacts: open %s: bucket %q not reachable: %w", where, u.Host, err)
	}
	s := &bucketStore{bucket: b, where: "s3://" + u.Host, maxSize: o.maxObjectSize}
	s.createOnce = s.conditionalCreate
	return s, nil
}
