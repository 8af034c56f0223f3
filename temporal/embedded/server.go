// Package embedded runs Signoff's embedded Temporal server (SQLite file, Web UI, loopback
// only, mutual TLS) for the one-machine default. With an external cluster or Temporal Cloud,
// don't call Start; just temporal.Dial.
//
// It is apart from the temporal package so that what only dials Temporal does not link the
// server: a test binary that does is about 280 MB under -race and takes some 14 s to link.
// temporal/temporaltest starts one for tests; the server-backed tests of the rest of the
// project live in e2e/.
package embedded

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/protobuf/types/known/durationpb"

	"go.temporal.io/server/common/cluster"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/membership/static"
	sqliteplugin "go.temporal.io/server/common/persistence/sql/sqlplugin/sqlite"
	"go.temporal.io/server/common/primitives"
	sqliteschema "go.temporal.io/server/schema/sqlite"
	temporalsrv "go.temporal.io/server/temporal"

	"github.com/signoff/signoff/temporal"
)

// ErrDataDirLocked means another server (in this or another process) owns the
// data dir. Two servers on one SQLite file would both own history shard 1 and
// corrupt each other's state; SQLite does not prevent that on its own.
var ErrDataDirLocked = errors.New("temporal data dir is in use by another server")

// clusterName is the single cluster's name, as in the Temporal CLI dev server.
const clusterName = "active"

// Server is a running embedded Temporal server and, optionally, its Web UI.
type Server struct {
	cfg      Config
	frontend string
	uiURL    string
	creds    temporal.Credentials

	srv  temporalsrv.Server
	ui   *uiServer
	lock *dirLock

	stopOnce sync.Once
	stopErr  error
}

// Start runs the embedded server and returns once the frontend accepts calls,
// the namespace exists with the configured retention and the UI (if on) answers.
// It returns an error instead of exiting when a port is taken or another server
// holds the data dir. Call Stop to shut down and release the data dir.
func Start(ctx context.Context, cfg Config) (_ *Server, err error) {
	cfg, err = cfg.normalized()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("temporal: create data dir: %w", err)
	}
	dbPath := filepath.Join(cfg.DataDir, DBFileName)

	lock, err := lockDataDir(dbPath + ".lock")
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, lock: lock}
	defer func() {
		if err != nil {
			// Undo whatever started; the error that got us here matters more.
			_ = s.Stop()
		}
	}()
	if s.creds, err = temporal.EnsureCredentials(cfg.DataDir, time.Now()); err != nil {
		return nil, err
	}

	p, err := reservePorts(cfg.Host, cfg.FrontendPort, cfg.UIPort)
	if err != nil {
		return nil, err
	}
	defer p.release()
	s.frontend = net.JoinHostPort(cfg.Host, strconv.Itoa(p.frontend))
	if err := s.creds.RecordAddress(s.frontend); err != nil {
		return nil, fmt.Errorf("temporal: record the frontend address for clients: %w", err)
	}

	sqlCfg := sqliteConfig(dbPath)
	if err := ensureSchema(dbPath); err != nil {
		return nil, err
	}
	if err := preRegisterNamespace(sqlCfg, cfg.Namespace, cfg.RetentionDays); err != nil {
		return nil, err
	}

	// Free our placeholder listeners only now: NewServer already binds.
	p.release()
	srv, err := temporalsrv.NewServer(
		temporalsrv.WithConfig(serverConfig(cfg.Host, p, sqlCfg, s.creds)),
		temporalsrv.ForServices(temporalsrv.DefaultServices),
		temporalsrv.WithStaticHosts(map[primitives.ServiceName]static.Hosts{
			primitives.FrontendService: static.SingleLocalHost(s.frontend),
			primitives.HistoryService:  static.SingleLocalHost(net.JoinHostPort(cfg.Host, strconv.Itoa(p.history))),
			primitives.MatchingService: static.SingleLocalHost(net.JoinHostPort(cfg.Host, strconv.Itoa(p.matching))),
			primitives.WorkerService:   static.SingleLocalHost(net.JoinHostPort(cfg.Host, strconv.Itoa(p.worker))),
		}),
		temporalsrv.WithLogger(serverLogger(cfg)),
		temporalsrv.WithDynamicConfigClient(dynamicconfig.StaticClient{
			// The history shard's queues read new tasks at most 20 times a second by default,
			// a guard for a shared database. With our one shard, that put ~45 ms on every
			// workflow task and every activity on another queue once its burst was spent: a
			// contract whose activities do nothing took 1.5 s instead of 0.2 s
			// (BenchmarkContracts). The reads still happen only when there is a new task.
			dynamicconfig.TransferProcessorMaxPollRPS.Key():   1000,
			dynamicconfig.VisibilityProcessorMaxPollRPS.Key(): 1000,
			// A control activity scheduled by the control worker's own workflow task is handed
			// back in that task's reply: no round trip through matching and one history write
			// fewer per activity. History is the same as a polled start (replay unchanged).
			dynamicconfig.EnableActivityEagerExecution.Key(): true,
			// One partition per task queue: partitions spread a queue over matching hosts, and
			// we have one. With four, a task in a partition no poller was waiting on sat there
			// until forwarded to one that was: with 20 contracts in flight, a new workflow's
			// first task or a lock grant waited 2 to 7 s, so the slowest contract took 5.7 to
			// 11 s; with one, 2.8 to 4.6 s (BenchmarkContracts' p95).
			dynamicconfig.MatchingNumTaskqueueWritePartitions.Key(): 1,
			dynamicconfig.MatchingNumTaskqueueReadPartitions.Key():  1,
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("temporal: configure server: %w", err)
	}
	if err := srv.Start(); err != nil {
		_ = srv.Stop()
		return nil, fmt.Errorf("temporal: start server: %w", err)
	}
	s.srv = srv

	if err := ensureRetention(ctx, s.DialConfig(), cfg.RetentionDays); err != nil {
		return nil, err
	}

	if cfg.UIPort != 0 {
		s.ui, err = startUI(uiSetup{host: cfg.Host, port: p.ui, frontend: s.frontend, tls: s.creds.ClientTLS(),
			namespace: cfg.Namespace, writes: cfg.UIWriteActions})
		if err != nil {
			return nil, err
		}
		s.uiURL = "http://" + net.JoinHostPort(cfg.Host, strconv.Itoa(p.ui))
	}
	return s, nil
}

// FrontendAddress is host:port of the gRPC frontend.
func (s *Server) FrontendAddress() string { return s.frontend }

// UIURL is the Web UI's base URL, or "" when the UI is off.
func (s *Server) UIURL() string { return s.uiURL }

// UIOpenURL is the URL a person opens the Web UI with: UIURL, carrying this process's write
// token when write actions are on (Config.UIWriteActions). Print it; never write it to a file.
func (s *Server) UIOpenURL() string {
	if s.ui == nil || s.ui.token == "" {
		return s.uiURL
	}
	return s.uiURL + "/?" + uiTokenParam + "=" + s.ui.token
}

// NewClientCertificate reports whether this start made the client certificate (the first start
// on the data dir, or one that replaced a damaged or expiring set): copies on other hosts no
// longer get in.
func (s *Server) NewClientCertificate() bool { return s.creds.Made }

// Namespace is the namespace Start registered.
func (s *Server) Namespace() string { return s.cfg.Namespace }

// RetentionDays is the retention Start applied to the namespace.
func (s *Server) RetentionDays() int { return s.cfg.RetentionDays }

// DBPath is the SQLite file holding all workflow state.
func (s *Server) DBPath() string { return filepath.Join(s.cfg.DataDir, DBFileName) }

// DialConfig reaches this server with its client certificate; set Logger on the copy if
// needed. Another process finds the same credentials with EmbeddedClientTLS.
func (s *Server) DialConfig() temporal.DialConfig {
	return temporal.DialConfig{Address: s.frontend, Namespace: s.cfg.Namespace, TLS: s.creds.ClientTLS()}
}

// Stop shuts down the UI and the server and releases the data dir. It is safe
// to call more than once; later calls return the first result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		var errs []error
		if s.ui != nil {
			s.ui.stop()
		}
		if s.srv != nil {
			if err := s.srv.Stop(); err != nil {
				errs = append(errs, fmt.Errorf("temporal: stop server: %w", err))
			}
		}
		if err := s.lock.release(); err != nil {
			errs = append(errs, fmt.Errorf("temporal: release data dir lock: %w", err))
		}
		s.stopErr = errors.Join(errs...)
	})
	return s.stopErr
}

// sqliteConfig is the persistence config for dbPath: WAL so the UI's reads don't
// block writes, synchronous=FULL so a power cut loses no acknowledged history.
func sqliteConfig(dbPath string) *config.SQL {
	return &config.SQL{
		PluginName:   sqliteplugin.PluginName,
		DatabaseName: dbPath,
		ConnectAttributes: map[string]string{
			"mode":         "rwc",
			"journal_mode": "wal",
			"synchronous":  "2",
			// Checkpoint every 32 MB of WAL, not SQLite's 4 MB: a contract writes ~7 MB, mostly
			// the same hot pages (shard, executions, queues), which each checkpoint copied back
			// again; fewer checkpoints copy them fewer times (BenchmarkContracts).
			"wal_autocheckpoint": "8192",
		},
	}
}

// ensureSchema creates the schema on first start. It builds it in a scratch file
// and renames it into place, so a crash halfway never leaves a database that
// exists but lacks tables (which a plain "create if missing" would not repair).
func ensureSchema(dbPath string) error {
	if _, err := os.Stat(dbPath); err == nil {
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("temporal: stat database: %w", err)
	}
	// The SQLite plugin keeps one connection per file name for the life of the
	// process, so every attempt gets a fresh scratch name.
	tmp := fmt.Sprintf("%s.setup-%d-%d", dbPath, os.Getpid(), time.Now().UnixNano())
	defer func() { _ = os.Remove(tmp); _ = os.Remove(tmp + "-journal") }()
	// No journal and no syncs per statement: a crash only loses the scratch
	// file. One fsync before the rename makes the result durable.
	scratch := &config.SQL{
		PluginName:        sqliteplugin.PluginName,
		DatabaseName:      tmp,
		ConnectAttributes: map[string]string{"mode": "rwc", "synchronous": "0", "journal_mode": "off"},
	}
	if err := sqliteschema.SetupSchema(scratch); err != nil {
		return fmt.Errorf("temporal: create schema: %w", err)
	}
	// Workflow histories hold customer data: owner-only, like the data dir.
	// SQLite gives the -wal and -shm files the same mode.
	if err := os.Chmod(tmp, 0o600); err != nil {
		return fmt.Errorf("temporal: restrict new database: %w", err)
	}
	if err := syncPath(tmp); err != nil {
		return fmt.Errorf("temporal: sync new database: %w", err)
	}
	if err := os.Rename(tmp, dbPath); err != nil {
		return fmt.Errorf("temporal: move new database into place: %w", err)
	}
	if err := syncPath(filepath.Dir(dbPath)); err != nil {
		return fmt.Errorf("temporal: sync data dir: %w", err)
	}
	return nil
}

// syncPath flushes a file or directory to disk.
func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// preRegisterNamespace writes the namespace straight into the database before
// the server starts, so it is usable at once (a namespace registered over the API
// only appears after the registry refresh). No-op if it already exists.
func preRegisterNamespace(sqlCfg *config.SQL, name string, retentionDays int) error {
	ns, err := sqliteschema.NewNamespaceConfig(clusterName, name, false, nil)
	if err != nil {
		return fmt.Errorf("temporal: namespace %q: %w", name, err)
	}
	ns.Detail.Config.Retention = durationpb.New(retention(retentionDays))
	if err := sqliteschema.CreateNamespaces(sqlCfg, ns); err != nil {
		return fmt.Errorf("temporal: register namespace %q: %w", name, err)
	}
	return nil
}

func retention(days int) time.Duration { return time.Duration(days) * 24 * time.Hour }

func serverConfig(host string, p *ports, sqlCfg *config.SQL, c temporal.Credentials) *config.Config {
	frontend := net.JoinHostPort(host, strconv.Itoa(p.frontend))
	svc := func(port int) config.Service {
		return config.Service{RPC: config.RPC{GRPCPort: port, BindOnIP: host}}
	}
	// Every listener, the frontend and the internal ones alike, wants a certificate from the
	// CA; the internal clients and the system worker present the server's own.
	mutual := config.GroupTLS{
		Server: config.ServerTLS{CertFile: c.ServerCert(), KeyFile: c.ServerKey(), ClientCAFiles: []string{c.CA()}, RequireClientAuth: true},
		Client: config.ClientTLS{ServerName: temporal.EmbeddedServerName, RootCAFiles: []string{c.CA()}},
	}
	return &config.Config{
		Global: config.Global{TLS: config.RootTLS{
			Internode: mutual,
			Frontend:  mutual,
			SystemWorker: config.WorkerTLS{CertFile: c.ServerCert(), KeyFile: c.ServerKey(),
				Client: config.ClientTLS{ServerName: temporal.EmbeddedServerName, RootCAFiles: []string{c.CA()}}},
		}},
		Persistence: config.Persistence{
			DefaultStore:     sqliteplugin.PluginName,
			VisibilityStore:  sqliteplugin.PluginName,
			NumHistoryShards: 1,
			DataStores:       map[string]config.DataStore{sqliteplugin.PluginName: {SQL: sqlCfg}},
		},
		ClusterMetadata: &cluster.Config{
			EnableGlobalNamespace:    false,
			FailoverVersionIncrement: 10,
			MasterClusterName:        clusterName,
			CurrentClusterName:       clusterName,
			ClusterInformation: map[string]cluster.ClusterInformation{
				clusterName: {Enabled: true, InitialFailoverVersion: 1, RPCAddress: frontend},
			},
		},
		DCRedirectionPolicy: config.DCRedirectionPolicy{Policy: "noop"},
		Services: map[string]config.Service{
			string(primitives.FrontendService): svc(p.frontend),
			string(primitives.HistoryService):  svc(p.history),
			string(primitives.MatchingService): svc(p.matching),
			string(primitives.WorkerService):   svc(p.worker),
		},
		Archival: config.Archival{
			History:    config.HistoryArchival{State: "disabled"},
			Visibility: config.VisibilityArchival{State: "disabled"},
		},
		NamespaceDefaults: config.NamespaceDefaults{
			Archival: config.ArchivalNamespaceDefaults{
				History:    config.HistoryArchivalNamespaceDefaults{State: "disabled"},
				Visibility: config.VisibilityArchivalNamespaceDefaults{State: "disabled"},
			},
		},
		// The server's internal worker service dials the frontend through this.
		PublicClient: config.PublicClient{HostPort: frontend},
	}
}

// serverLogger writes JSON lines at cfg.LogLevel to cfg.LogOutput. It is never
// a no-op logger: the server relies on Fatal exiting, and a no-op Fatal would
// let it run on with a nil listener.
func serverLogger(cfg Config) log.Logger {
	core := zapcore.NewCore(
		zapcore.NewJSONEncoder(log.DefaultZapEncoderConfig),
		zapcore.Lock(zapcore.AddSync(cfg.LogOutput)),
		log.ParseZapLevel(cfg.LogLevel),
	)
	return log.NewZapLogger(zap.New(core, zap.ErrorOutput(zapcore.Lock(zapcore.AddSync(cfg.LogOutput)))))
}
