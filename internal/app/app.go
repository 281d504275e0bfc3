// Package app assembles `probly serve`: it builds the command table, the
// key space and the settings, recovers the data directory through
// internal/persist, starts the RESP server and handles shutdown signals.
// It holds no protocol or algorithm logic of its own.
package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/probly/probly/internal/codec"
	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/command/bf"
	"github.com/probly/probly/internal/command/cf"
	"github.com/probly/probly/internal/command/cms"
	"github.com/probly/probly/internal/command/generic"
	"github.com/probly/probly/internal/command/pf"
	"github.com/probly/probly/internal/command/str"
	tdcmd "github.com/probly/probly/internal/command/tdigest"
	"github.com/probly/probly/internal/command/topk"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/follow"
	"github.com/probly/probly/internal/keyspace"
	"github.com/probly/probly/internal/persist"
	"github.com/probly/probly/internal/redisbloom"
	"github.com/probly/probly/internal/rediscuckoo"
	"github.com/probly/probly/internal/resp"
	"github.com/probly/probly/internal/server"
	"github.com/probly/probly/internal/strval"
)

// Defaults of `probly serve`.
const (
	DefaultAddr        = server.DefaultAddr
	DefaultDir         = "./probly-data"
	DefaultAppendFsync = "everysec"
)

// ErrRecovery wraps any failure to load the data directory.
var ErrRecovery = errors.New("app: recovery failed")

// Options configures Run.
type Options struct {
	Addr        string // listen address; default DefaultAddr
	Dir         string // data directory; default DefaultDir
	AppendFsync string // always | everysec | no; default everysec
	RequirePass string
	// ACLFile is the aclfile (Redis format; ACL SAVE/LOAD), "" = none.
	ACLFile string
	Logger  *slog.Logger
	Version string
	// Listener, if set, is used instead of listening on Addr (tests).
	Listener net.Listener
	// UnixSocket, if set, is the path of a Unix socket the server listens
	// on as well, as Redis's unixsocket (plain RESP, no TLS); a stale
	// socket file there is replaced. UnixSocketPerm, if not 0, is the
	// socket file's permission bits (unixsocketperm). listenconfig.go.
	UnixSocket     string
	UnixSocketPerm os.FileMode
	// Ready, if set, receives the bound address once recovery finished and
	// the server accepts connections.
	Ready func(addr net.Addr)

	// Operations (see ops.go). MetricsAddr is the HTTP address of
	// /metrics, /healthz and /readyz; "" or "off" = no HTTP listener
	// (the CLI default is DefaultMetricsAddr). MetricsListener, if set, is
	// used instead (tests).
	MetricsAddr     string
	MetricsListener net.Listener
	// TLSCert and TLSKey (PEM files, both or neither) make the RESP
	// listener speak TLS.
	TLSCert, TLSKey string
	// ProtectedModeOff allows a non-loopback Addr without RequirePass, a
	// non-loopback MetricsAddr and, with Follow, a non-loopback listen
	// address of the embedded NATS server (embedded.listen), which has no
	// authentication.
	ProtectedModeOff bool
	// Config holds start-up values of CONFIG parameters (name, value),
	// applied in order before recovery, e.g. {"maxmemory", "2gb"}.
	Config [][2]string
	// ConfigFile is the configuration file the server was started with
	// (`probly serve FILE`), the file CONFIG REWRITE writes; "" = none.
	// FileConfig holds its directives that set CONFIG parameters, applied
	// before Config (so values from flags win); an unknown name or a bad
	// value is an ErrInvalidOptions error naming the file and line.
	ConfigFile string
	FileConfig []config.Directive
	// Follow, if set, is the path of a --follow configuration file: BF/CF
	// keys follow a NATS JetStream change stream (see follow.go).
	Follow string
	// beforeRecovery, if set, runs just before recovery starts (tests).
	beforeRecovery func()
}

// Tables builds the command table and settings registry with every command
// family registered.
//
// Every byte-sized parameter accepts Redis memory values ("1mb", "512kb",
// bytes) in CONFIG SET and on the command line, as Redis's memory configs
// do: maxmemory, proto-max-bulk-len, client-query-buffer-limit,
// auto-aof-rewrite-min-size and hll-sparse-max-bytes parse them
// themselves; the per-filter budgets bf-max-filter-bytes and
// cf-max-filter-bytes (registered with an integer parser) get the
// conversion here. Both also accept "auto" (config.Registry.AcceptAuto),
// their serve flags' default: a quarter of the memory available, the
// value they start with.
func Tables() (*command.Table, *config.Registry) {
	t := command.NewTable()
	cfg := config.New()
	generic.Register(t, cfg)
	str.Register(t, cfg)
	bf.Register(t, cfg)
	pf.Register(t, cfg)
	cf.Register(t, cfg)
	topk.Register(t, cfg)
	cms.Register(t, cfg)
	tdcmd.Register(t, cfg)
	follow.Register(t)
	cfg.AcceptMemoryUnits(memoryUnitParams...)
	// "auto", the serve flags' default, in CONFIG SET and files too.
	cfg.AcceptAuto("bf-max-filter-bytes", strconv.FormatUint(bf.DefaultFilterBytes, 10))
	cfg.AcceptAuto("cf-max-filter-bytes", strconv.FormatUint(cf.DefaultFilterBytes, 10))
	return t, cfg
}

// memoryUnitParams are the byte-sized parameters whose own Set takes only
// a decimal byte count (see Tables).
var memoryUnitParams = []string{"bf-max-filter-bytes", "cf-max-filter-bytes"}

// The value decoders of every type (internal/codec): snapshot loading
// (Decode) and RESTORE share them. A new type adds its line here.
func init() {
	// The BF decoder allocates only what data backs, so the snapshot's
	// own size bounds it; the live budget applies again at the next write
	// (BF.ADD and friends reset it from bf-max-filter-bytes).
	codec.Register(redisbloom.TypeName, codec.Decoder{BudgetParam: "bf-max-filter-bytes",
		Decode: func(data []byte, budget uint64) (keyspace.Value, error) {
			return redisbloom.UnmarshalChain(data, cmp.Or(budget, bf.MaxFilterBytes))
		},
		Read: func(r io.Reader, n, budget uint64) (keyspace.Value, error) {
			return redisbloom.ReadChain(r, n, cmp.Or(budget, bf.MaxFilterBytes))
		}})
	codec.Register(rediscuckoo.TypeName, codec.Decoder{BudgetParam: "cf-max-filter-bytes",
		Decode: func(data []byte, budget uint64) (keyspace.Value, error) {
			return rediscuckoo.UnmarshalFilter(data, cmp.Or(budget, rediscuckoo.MaxBudget))
		},
		Read: func(r io.Reader, n, budget uint64) (keyspace.Value, error) {
			return rediscuckoo.ReadFilter(r, n, cmp.Or(budget, rediscuckoo.MaxBudget))
		}})
	codec.Register(strval.TypeName, codec.Decoder{MaxSize: strval.MaxLen,
		Decode: func(data []byte, _ uint64) (keyspace.Value, error) { return strval.Unmarshal(data) }})
	codec.Register(topk.TypeName, codec.Decoder{
		Decode: func(data []byte, _ uint64) (keyspace.Value, error) { return topk.Unmarshal(data) }})
	codec.Register(cms.TypeName, codec.Decoder{
		Decode: func(data []byte, _ uint64) (keyspace.Value, error) { return cms.Unmarshal(data) }})
	codec.Register(tdcmd.TypeName, codec.Decoder{
		Decode: func(data []byte, _ uint64) (keyspace.Value, error) { return tdcmd.Decode(data) }})
}

// Decode turns a snapshot record into a value by its type name, through
// the codec registry.
func Decode(typeName string, data []byte) (keyspace.Value, error) {
	if _, ok := codec.Lookup(typeName); !ok {
		return nil, fmt.Errorf("app: snapshot holds unknown type %q", typeName)
	}
	return codec.Decode(typeName, data)
}

// Run recovers the data directory, serves until ctx is cancelled, SIGINT
// or SIGTERM arrives or a client's SHUTDOWN succeeds, then shuts down
// gracefully: it stops accepting, lets in-flight commands finish, writes
// a snapshot if a signal stopped it and save points are configured (as
// Redis does; SHUTDOWN decides that itself, and a cancelled ctx writes
// none), fsyncs and closes the log and returns. A failed shutdown
// snapshot is logged and returned as an error after the log was closed
// (every write is in the AOF: nothing is lost). A second signal during
// the shutdown ends the process at once.
func Run(ctx context.Context, o Options) error {
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.Dir == "" {
		o.Dir = DefaultDir
	}
	if o.AppendFsync == "" {
		o.AppendFsync = DefaultAppendFsync
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		if n := GoMemoryLimit(); n > 0 && n < math.MaxInt64 {
			debug.SetMemoryLimit(int64(n))
		}
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	// Bind first: with the port taken, nothing (data folder, AOF) is
	// created.
	ln := o.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", o.Addr); err != nil {
			return err
		}
	}
	defer ln.Close() // Serve closes it too; this covers the error returns before it
	// The Unix socket (--unixsocket; nil without one) is bound first too.
	uln, err := listenUnix(o.UnixSocket, o.UnixSocketPerm)
	if err != nil {
		return err
	}
	if uln != nil {
		defer uln.Close()
	}
	table, cfg := Tables()
	auto := registerPersistenceConfig(cfg, o)
	registerListenConfig(cfg, o, ln) // listenconfig.go
	store := keyspace.New(nil)
	defer startMemoryTuner(store)() // memory.go: the limit follows the data
	op, err := newOps(o, log, table, cfg, store)
	if err != nil {
		return err
	}
	defer op.close()
	srv := op.srv
	if o.beforeRecovery != nil {
		o.beforeRecovery()
	}

	start := time.Now()
	// No single allocation may ask for more than the process can have:
	// refusing it is an error reply (or a refused recovery), where the
	// allocation would be a fatal out-of-memory error.
	command.SetAllocLimit(availableMemory())
	replay := Replayer(table, cfg, store)
	store.SetLoading(true) // nothing expires while the log replays (as Redis)
	db, err := persist.Open(persist.Options{Dir: o.Dir, Fsync: o.AppendFsync, Logger: log,
		// Redis's AOF buffer: the server writes it once per batch (Wait).
		BufferAppends: true,
		// From the first fsync on (recovery fsyncs the AOF it opens), so
		// the fsync histogram's count equals probly_aof_fsyncs_total.
		OnFsync: op.metrics.ObserveFsync},
		Decode,
		func(key string, v keyspace.Value) error {
			store.Update([]byte(key), func(tx *keyspace.Txn) { tx.Set(v) })
			return nil
		},
		func(args [][]byte) error { return replay(args) },
	)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrRecovery, err)
	}
	defer db.Close()
	store.SetLoading(false)
	// The AOF records replayed (the replay callback also sets the expire
	// times of the snapshot's keys, which are not AOF records).
	log.Info("recovered", "dir", o.Dir, "keys", store.Len(), "aof_records", db.Changes(), "took", time.Since(start).Round(time.Millisecond))
	store.SetLogger(db)
	stopExpiry := store.StartActiveExpire()
	defer stopExpiry()
	if err := auto.start(db, store); err != nil {
		return err
	}
	op.attachPersist(db)
	fol, err := startFollow(ctx, o, log, table, cfg, store, db, op)
	if err != nil {
		return err
	}
	defer fol.close()

	ln = op.listener(ln)
	if uln != nil {
		ln = newMultiListener(ln, uln)
	}
	op.recovered.Store(true)
	log.Info("serving", "addr", ln.Addr().String(), "unixsocket", o.UnixSocket, "appendfsync", o.AppendFsync, "tls", op.tls != nil)
	if o.Ready != nil {
		o.Ready(ln.Addr())
	}

	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigc)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	save := false
	select {
	case err := <-errc:
		return err
	case <-ctx.Done(): // the embedding program's stop: no snapshot
	case sig := <-sigc:
		// As Redis: SIGTERM and SIGINT write a snapshot when save points
		// are configured; a second signal ends the process at once.
		signal.Stop(sigc)
		save = srv.SaveOnShutdown()
		log.Info("signal received", "signal", sig.String(), "snapshot", save)
	case <-srv.ShutdownRequested(): // SHUTDOWN: the same graceful path (it saved already, if asked to)
	}
	log.Info("shutting down")
	fol.endWaits() // FOLLOW.WAIT replies before connections drain
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Error("shutdown", "err", err)
	}
	fol.close() // stops writing before the log closes
	stopExpiry()
	var saveErr error
	if save {
		if saveErr = shutdownSnapshot(db, store); saveErr != nil {
			log.Error("the shutdown snapshot failed; every write is in the AOF", "err", saveErr)
		}
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("app: closing the log: %w", err)
	}
	if saveErr != nil {
		return fmt.Errorf("app: the shutdown snapshot failed (every write is in the AOF, which was closed): %w", saveErr)
	}
	log.Info("stopped")
	return nil
}

// shutdownSnapshot writes the snapshot of a signalled shutdown once the
// connections and the follower have stopped, under the exclusive command
// gate (no transaction can be half applied at its cut). A snapshot that
// is running (an automatic one) is waited for, then the final one is
// written, so that it holds every write.
func shutdownSnapshot(db *persist.DB, store *keyspace.Store) error {
	for {
		store.Exclusive()
		err := db.SnapshotFor(store, persist.TriggerShutdown)
		store.ExclusiveDone()
		if !errors.Is(err, persist.ErrSnapshotInProgress) {
			return err
		}
		// The running snapshot may need the gate shared for its cut: it
		// was released above.
		time.Sleep(10 * time.Millisecond)
	}
}

// Replayer returns a function that applies one logged record to store by
// running it through the command table (command.Table.Run, internal
// records allowed), discarding the reply. A record whose outcome is an
// error (at any depth: an error element of a BF.MADD reply counts) means
// the log and the code disagree; it aborts recovery rather than silently
// dropping data. Records of commands that are never logged (admin
// commands, containers and their subcommands) are refused.
func Replayer(table *command.Table, cfg *config.Registry, store *keyspace.Store) func(args [][]byte) error {
	w := new(resp.Writer) // never flushed: Reset drops each reply
	c := &command.Ctx{R: resp.New(w, 2), Store: store, Config: cfg,
		Conn: &command.Conn{Proto: 2, Authed: true}, Server: &replayServer{store: store, table: table}, Replay: true}
	policy := &command.Policy{Internal: true, Admit: command.AdmitFunc(func(_ *command.Ctx, spec *command.Spec) string {
		if spec.Flags&command.FlagAdmin != 0 || len(spec.Subcommands) > 0 || strings.IndexByte(spec.Name, '|') >= 0 {
			// CONFIG, SAVE, DEBUG …: never logged, so the file was not
			// written by probly.
			return errNeverLogged
		}
		return ""
	})}
	return func(args [][]byte) error {
		if len(args) == 0 {
			return errors.New("app: empty log record")
		}
		w.Reset()
		c.Args = args
		o := table.Run(c, policy)
		c.Args = nil
		switch {
		case o.Spec == nil:
			return fmt.Errorf("app: log record for unknown command %q", args[0])
		case !o.Ran && o.Err == errNeverLogged:
			return fmt.Errorf("app: log record for %q, a command that is never logged", o.Spec.Name)
		case !o.Ran:
			return fmt.Errorf("app: log record %q with %d arguments refused: %s", o.Spec.Name, len(args), o.Err)
		case o.Err == command.ErrOOM || o.Err == string(redisbloom.ErrInsufficientMemory) || o.Err == string(rediscuckoo.ErrInsufficientMemory):
			// Replay ignores maxmemory: only the allocation limit refuses
			// (a filter's insufficient-memory error: the per-filter caps
			// during replay are at least the memory available).
			return fmt.Errorf("app: replaying %q needs more memory than this process can have (%d bytes available)", o.Spec.Name, command.AllocLimit())
		case o.Failed:
			return fmt.Errorf("app: replaying %q failed: %s", o.Spec.Name, o.Err)
		}
		return nil
	}
}

// errNeverLogged is the replayer's refusal of a record of a command that
// probly never logs (Policy.Admit).
const errNeverLogged = "ERR never logged"

// replayServer is the command.Server seen by handlers during recovery.
type replayServer struct {
	store *keyspace.Store
	table *command.Table
}

func (r *replayServer) Info(string) string    { return "" }
func (r *replayServer) Save() error           { return errors.New("not during recovery") }
func (r *replayServer) BGSave() error         { return errors.New("not during recovery") }
func (r *replayServer) LastSave() int64       { return 0 }
func (r *replayServer) RequirePass() string   { return "" }
func (r *replayServer) Table() *command.Table { return r.table }
func (r *replayServer) Flush() (uint64, error) {
	r.store.Flush(nil)
	return 0, nil
}
