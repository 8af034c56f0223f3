// Package weedtest starts a real SeaweedFS (Apache-2.0) for tests of the s3:// artifact store:
// one `weed server` per test on loopback, on free ports, in its own temporary directory, killed
// by PID when the test ends. The binary is installed by `go tool task s3:setup` into .bin/weed.
package weedtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/signoff/signoff/internal/modroot"
	"github.com/signoff/signoff/internal/spareport"
)

const (
	// Setup installs the server.
	Setup = "go tool task s3:setup"
	// AccessKey and SecretKey are the static credentials of the one identity the test server
	// knows; loopback only. Start puts them in the AWS_* variables for the test.
	AccessKey = "signoff-test-access"
	SecretKey = "signoff-test-secret-key"
	// startLimit only catches a server that hangs; readiness itself is polled.
	startLimit = 90 * time.Second
)

// Server is a running SeaweedFS with its S3 gateway.
type Server struct {
	s3Port  int
	client  *s3.Client
	buckets atomic.Int64
}

// Start runs `weed server` with a master, a volume server, a filer and the S3 gateway in
// one process. It fails (never skips) when the binary is missing, naming the setup task.
func Start(tb testing.TB) *Server {
	tb.Helper()
	bin := Binary(tb)
	isolateAWSConfig(tb)
	dir := tb.TempDir()
	p := freePorts(tb, 8)
	ports := Ports{Master: p[0], MasterGRPC: p[1], Volume: p[2], VolumeGRPC: p[3], Filer: p[4], FilerGRPC: p[5], S3: p[6], S3GRPC: p[7]}
	args := Args(tb, dir, "127.0.0.1", ports)
	masterGRPC, volumeGRPC, filerGRPC, s3GRPC, s3Port := ports.MasterGRPC, ports.VolumeGRPC, ports.FilerGRPC, ports.S3GRPC, ports.S3
	logPath := filepath.Join(dir, "weed.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		tb.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	tb.Cleanup(func() {
		stopWeed(tb, cmd.Process, exited)
		_ = logFile.Close()
		// weed puts a gRPC unix socket for each service in /tmp whatever -dir says, named by
		// port; a killed server leaves them behind. Remove exactly ours.
		for _, p := range []int{masterGRPC, volumeGRPC, filerGRPC, s3GRPC} {
			socks, _ := filepath.Glob(fmt.Sprintf("/tmp/seaweedfs-*-grpc-%d.sock", p))
			for _, s := range socks {
				_ = os.Remove(s)
			}
		}
	})

	w := &Server{s3Port: s3Port}
	if err := w.waitReady(tb, exited); err != nil {
		log, _ := os.ReadFile(logPath)
		tb.Fatalf("SeaweedFS did not come up: %v\n--- last of %s ---\n%s", err, logPath, tail(log, 4000))
	}
	return w
}

// Binary is the installed weed, or a failed test naming the setup task.
func Binary(tb testing.TB) string {
	tb.Helper()
	root, err := modroot.FromWD()
	if err != nil {
		tb.Fatal(err)
	}
	bin := filepath.Join(root, ".bin", "weed")
	if _, err := os.Stat(bin); err != nil {
		tb.Fatalf("SeaweedFS is not installed (%v): run `%s`", err, Setup)
	}
	return bin
}

// Ports are the eight ports one `weed server` listens on.
type Ports struct {
	Master, MasterGRPC, Volume, VolumeGRPC, Filer, FilerGRPC, S3, S3GRPC int
}

// Args prepares dir (the identity file the S3 gateway knows, a data folder) and returns the
// arguments of a `weed server` on ip: master, volume server, filer and S3 gateway in one
// process, its state under dir, nothing read from the host's configuration.
func Args(tb testing.TB, dir, ip string, p Ports) []string {
	tb.Helper()
	config := `{"identities":[{"name":"signoff-test","credentials":[{"accessKey":"` + AccessKey +
		`","secretKey":"` + SecretKey + `"}],"actions":["Admin","Read","Write","List","Tagging"]}]}`
	if err := os.WriteFile(filepath.Join(dir, "s3.json"), []byte(config), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		tb.Fatal(err)
	}
	port := strconv.Itoa
	return []string{
		"-logtostderr",
		"-config_dir=" + dir, // an empty config dir: no security.toml or master.toml from the host
		"server",
		"-dir=" + filepath.Join(dir, "data"),
		"-ip=" + ip, "-ip.bind=" + ip,
		"-master.port=" + port(p.Master), "-master.port.grpc=" + port(p.MasterGRPC),
		"-master.telemetry=false",
		"-master.volumeSizeLimitMB=64",
		"-volume.port=" + port(p.Volume), "-volume.port.grpc=" + port(p.VolumeGRPC),
		"-volume.max=0",
		"-volume.preStopSeconds=0",
		"-filer",
		"-filer.port=" + port(p.Filer), "-filer.port.grpc=" + port(p.FilerGRPC),
		"-filer.localSocket=" + filepath.Join(dir, "filer.sock"),
		"-s3",
		"-s3.port=" + port(p.S3), "-s3.port.grpc=" + port(p.S3GRPC),
		"-s3.port.iceberg=0", "-s3.port.lance=0",
		"-s3.localSocket=" + filepath.Join(dir, "s3.sock"),
		"-s3.config=" + filepath.Join(dir, "s3.json"),
	}
}

// stopWeed ends the server we started, by its own PID: SIGTERM, then SIGKILL if it has not
// exited a few seconds later (its graceful shutdown can wait on its own peers).
func stopWeed(tb testing.TB, p *os.Process, exited <-chan struct{}) {
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-exited:
		return
	case <-time.After(5 * time.Second):
	}
	if err := p.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		tb.Errorf("kill weed (pid %d): %v", p.Pid, err)
	}
	<-exited
}

// waitReady polls the S3 endpoint until Probe succeeds. The deadline only catches a hang.
func (w *Server) waitReady(tb testing.TB, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(tb.Context(), startLimit)
	defer cancel()
	endpoint := w.Endpoint()
	w.client = Client(endpoint)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if last = Probe(ctx, w.client, endpoint, "ready-probe"); last == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("weed exited while starting (last probe: %v)", last)
		case <-ctx.Done():
			return fmt.Errorf("no working S3 endpoint at %s within %s (last probe: %v)", endpoint, startLimit, last)
		case <-tick.C:
		}
	}
}

// Client is an S3 client of the test server at endpoint, with its credentials.
func Client(endpoint string) *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(endpoint),
		Region:       "us-east-1",
		UsePathStyle: true,
		Credentials:  aws.CredentialsProviderFunc(staticCredentials),
	})
}

// Probe makes bucket (if it is not there yet) and stores an object in it: the gateway
// answers before the filer behind it is ready, and the first write waits for the filers'
// lock ring, so only a completed write means the server is ready. One try; callers poll.
func Probe(ctx context.Context, c *s3.Client, endpoint, bucket string) error {
	if err := createBucket(ctx, c, endpoint, bucket); err != nil {
		return err
	}
	_, err := c.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(bucket),
		Key:    aws.String("probe"),
		Body:   strings.NewReader("ready"),
	})
	return err
}

func staticCredentials(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: AccessKey, SecretAccessKey: SecretKey, Source: "test"}, nil
}

func createBucket(ctx context.Context, c *s3.Client, endpoint, name string) error {
	// A plain GET first: no point signing requests before anything listens.
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"/", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	_, err = c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(name)})
	var owned *types.BucketAlreadyOwnedByYou
	if errors.As(err, &owned) { // an earlier probe's create landed after all
		return nil
	}
	return err
}

// Endpoint is the S3 gateway's URL.
func (w *Server) Endpoint() string { return "http://127.0.0.1:" + strconv.Itoa(w.s3Port) }

// BucketURL is the store URL for a bucket on this server, in the form Open documents.
func (w *Server) BucketURL(bucket string) string { return BucketURL(w.Endpoint(), bucket) }

// BucketURL is the store URL (artifacts.Open) of bucket on the S3 endpoint.
func BucketURL(endpoint, bucket string) string {
	q := url.Values{}
	q.Set("endpoint", endpoint)
	q.Set("region", "us-east-1")
	q.Set("use_path_style", "true")
	return "s3://" + bucket + "?" + q.Encode()
}

// NewBucket creates an empty bucket, so each case counts only its own objects.
func (w *Server) NewBucket(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("case-%d", w.buckets.Add(1))
	if err := createBucket(tb.Context(), w.client, w.Endpoint(), name); err != nil {
		tb.Fatalf("create bucket %s: %v", name, err)
	}
	return w.BucketURL(name)
}

// isolateAWSConfig gives the SDK the test server's credentials and nothing from the host.
func isolateAWSConfig(tb testing.TB) {
	for _, kv := range Env(filepath.Join(tb.TempDir(), "none")) {
		k, v, _ := strings.Cut(kv, "=")
		tb.Setenv(k, v)
	}
}

// Env is the environment (KEY=value) that gives the AWS SDK the test server's credentials
// and nothing from the host: no shared config or profile (both point at missing, a path that
// does not exist), no endpoint override, and no instance metadata lookup (which would leave
// loopback). Processes a test starts get it too.
func Env(missing string) []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + SecretKey,
		"AWS_SESSION_TOKEN=",
		"AWS_PROFILE=",
		"AWS_CONFIG_FILE=" + missing,
		"AWS_SHARED_CREDENTIALS_FILE=" + missing,
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_ENDPOINT_URL=",
		"AWS_ENDPOINT_URL_S3=",
		"AWS_REGION=",
		"AWS_DEFAULT_REGION=",
	}
}

// freePorts chooses n distinct ports for weed to bind, outside the range outgoing connections
// take theirs from (see internal/spareport).
func freePorts(tb testing.TB, n int) []int {
	tb.Helper()
	ports, err := spareport.Pick(n)
	if err != nil {
		tb.Fatal(err)
	}
	return ports
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
