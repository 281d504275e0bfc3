// Command penetration shows probly's guard protecting a database from
// cache penetration: lookups of IDs that do not exist.
//
// It creates a SQLite database (modernc.org/sqlite, pure Go) with a users
// table, starts an embedded NATS JetStream server as the change stream,
// builds a guard.Guard from a snapshot of the table plus the stream, and
// serves GET /users/{id} over HTTP. A load generator then sends requests of
// which 90% ask for IDs that do not exist, twice: once against
// GET /direct/users/{id} (straight to the database) and once against
// GET /users/{id} (through the guard), while a writer keeps inserting users
// (commit, then publish) and checks read-your-writes through the guard.
// It prints the database queries of both runs, the queries avoided, the
// observed false-positive rates and the guard's Prometheus metrics.
//
//	go run . [-users 100000] [-requests 200000] [-miss 0.9]
package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	_ "modernc.org/sqlite"

	"github.com/probly/probly/guard"
	"github.com/probly/probly/guard/natsstream"
)

// Config is the example's parameters.
type Config struct {
	Users       int     // existing users (IDs 1 … Users)
	Requests    int     // requests per run
	MissShare   float64 // share of requests for IDs that do not exist
	Concurrency int     // concurrent clients
	FPR         float64 // the guard's target false-positive rate
	Dir         string  // working directory ("" = a temporary one, removed after)
	Seed        uint64
}

// Report is what a run measured.
type Report struct {
	Config Config

	DirectQueries  int64 // database queries of the run without the guard
	GuardedQueries int64 // database queries of the run with the guard
	Avoided        int64 // DirectQueries − GuardedQueries
	Reduction      float64
	Wrong          int64 // answers that disagreed with the database
	NotFound       int64 // 404 answers of the guarded run

	Inserted       int64 // users inserted during the guarded run
	ReadYourWrites int64 // of which found right after WaitApplied
	Stats          guard.Stats
	Metrics        string // the guard's Prometheus metrics, text format
	DirectTime     time.Duration
	GuardedTime    time.Duration
}

func main() {
	var c Config
	flag.IntVar(&c.Users, "users", 100_000, "existing users in the table")
	flag.IntVar(&c.Requests, "requests", 200_000, "requests per run")
	flag.Float64Var(&c.MissShare, "miss", 0.9, "share of requests for IDs that do not exist")
	flag.IntVar(&c.Concurrency, "concurrency", 8, "concurrent clients")
	flag.Float64Var(&c.FPR, "fpr", 0.01, "target false-positive rate of the filter")
	flag.StringVar(&c.Dir, "dir", "", "working directory for the database and JetStream (default: a temporary one)")
	flag.Uint64Var(&c.Seed, "seed", 1, "random seed of the load")
	flag.Parse()
	rep, err := Run(context.Background(), c, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		fmt.Fprintln(os.Stderr, "penetration:", err)
		os.Exit(1)
	}
	rep.Print(os.Stdout, true)
}

// app is the service: the database, the change stream and the guard.
type app struct {
	db      *sql.DB
	stream  *natsstream.Stream
	g       *guard.Guard[string]
	queries atomic.Int64
	nextID  atomic.Int64
}

// Run runs the whole example and returns its measurements.
func Run(ctx context.Context, c Config, log *slog.Logger) (*Report, error) {
	if c.Users <= 0 || c.Requests <= 0 || c.Concurrency <= 0 || !(c.MissShare >= 0 && c.MissShare <= 1) {
		return nil, errors.New("bad configuration")
	}
	if c.Dir == "" {
		d, err := os.MkdirTemp("", "penetration-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		c.Dir = d
	}
	a := &app{}
	var err error
	if a.db, err = openDB(ctx, filepath.Join(c.Dir, "users.db"), c.Users); err != nil {
		return nil, err
	}
	defer a.db.Close()
	a.nextID.Store(int64(c.Users) * 1000) // inserted users get IDs no request asks for by chance

	js, err := natsstream.StartEmbedded(natsstream.EmbeddedOptions{Dir: filepath.Join(c.Dir, "nats"), Listen: "off"})
	if err != nil {
		return nil, err
	}
	defer js.Close()
	nc, jsc, err := js.Connect()
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	if err := natsstream.EnsureStream(ctx, jsc, "USERS", []string{"users.created", "users.deleted"}); err != nil {
		return nil, err
	}
	if a.stream, err = natsstream.New(jsc, "USERS", map[string]guard.Op{"users.created": guard.OpAdd, "users.deleted": guard.OpDelete}); err != nil {
		return nil, err
	}

	a.g, err = guard.New(guard.Options[string]{
		Name:              "users",
		Loader:            a.load,
		Snapshot:          guard.SnapshotFunc(a.scan),
		Stream:            a.stream,
		Capacity:          uint64(c.Users) * 11 / 10, // room for the users inserted meanwhile
		FalsePositiveRate: c.FPR,
		Logger:            log,
	})
	if err != nil {
		return nil, err
	}
	defer a.g.Close()
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := a.g.WaitReady(wctx); err != nil {
		return nil, fmt.Errorf("guard not ready: %w", err)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(a.g.Collector())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /users/{id}", a.guarded)
	mux.HandleFunc("GET /direct/users/{id}", a.direct)
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c.Concurrency}, Timeout: 30 * time.Second}

	rep := &Report{Config: c}
	// Run 1: every request goes to the database.
	q0 := a.queries.Load()
	t0 := time.Now()
	if err := load(ctx, client, base+"/direct/users/", c, rep, false); err != nil {
		return nil, err
	}
	rep.DirectTime = time.Since(t0)
	rep.DirectQueries = a.queries.Load() - q0

	// Run 2: through the guard, while a writer inserts users and checks
	// that each is found as soon as the guard has applied its change.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var werr error
	wg.Go(func() { werr = a.writer(ctx, client, base, stop, rep) })
	q0 = a.queries.Load()
	t0 = time.Now()
	lerr := load(ctx, client, base+"/users/", c, rep, true)
	rep.GuardedTime = time.Since(t0)
	rep.GuardedQueries = a.queries.Load() - q0
	close(stop)
	wg.Wait()
	if lerr != nil {
		return nil, lerr
	}
	if werr != nil {
		return nil, werr
	}
	// The writer's own queries (inserts, read-your-writes lookups) are not
	// part of the load.
	rep.GuardedQueries -= 2 * rep.Inserted
	rep.Avoided = rep.DirectQueries - rep.GuardedQueries
	rep.Reduction = float64(rep.Avoided) / float64(rep.DirectQueries)
	rep.Stats = a.g.Stats()
	rep.Metrics, err = fetch(client, base+"/metrics")
	if err != nil {
		return nil, err
	}
	return rep, nil
}

// openDB creates the users table with users 1 … n.
func openDB(ctx context.Context, path string, n int) (*sql.DB, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(4)
	if _, err := db.ExecContext(ctx, `CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL)`); err != nil {
		db.Close()
		return nil, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		db.Close()
		return nil, err
	}
	st, err := tx.PrepareContext(ctx, `INSERT INTO users (id, name) VALUES (?, ?)`)
	if err != nil {
		tx.Rollback()
		db.Close()
		return nil, err
	}
	for i := 1; i <= n; i++ {
		if _, err := st.ExecContext(ctx, i, "user "+strconv.Itoa(i)); err != nil {
			tx.Rollback()
			db.Close()
			return nil, err
		}
	}
	st.Close()
	if err := tx.Commit(); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// load is the guard's Loader: one database query (a cache such as Redis
// would be asked first; the example keeps the database alone so the
// numbers count database work exactly).
func (a *app) load(ctx context.Context, key []byte) (string, bool, error) {
	id, err := strconv.ParseInt(string(key), 10, 64)
	if err != nil {
		return "", false, nil
	}
	return a.queryUser(ctx, id)
}

func (a *app) queryUser(ctx context.Context, id int64) (string, bool, error) {
	a.queries.Add(1)
	var name string
	err := a.db.QueryRowContext(ctx, `SELECT name FROM users WHERE id = ?`, id).Scan(&name)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return name, true, nil
}

// scan is the guard's Snapshot: read the stream head first, then every ID
// (a fuzzy snapshot, fine for a Bloom filter: see guard.Snapshot).
func (a *app) scan(ctx context.Context, fn func([]byte) error) (uint64, error) {
	pos, err := a.stream.Head(ctx)
	if err != nil {
		return 0, err
	}
	rows, err := a.db.QueryContext(ctx, `SELECT id FROM users`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var buf []byte
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return 0, err
		}
		buf = strconv.AppendInt(buf[:0], id, 10)
		if err := fn(buf); err != nil {
			return 0, err
		}
	}
	return pos, rows.Err()
}

func (a *app) guarded(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, err := strconv.ParseInt(id, 10, 64); err != nil {
		http.Error(w, "bad id", http.StatusBadRequest)
		return
	}
	name, found, err := a.g.Get(r.Context(), []byte(id))
	reply(w, id, name, found, err)
}

func (a *app) direct(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		http.Error(w, "bad id", http.StatusBadRequest)
		return
	}
	name, found, err := a.queryUser(r.Context(), id)
	reply(w, r.PathValue("id"), name, found, err)
}

func reply(w http.ResponseWriter, id, name string, found bool, err error) {
	switch {
	case err != nil:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	case !found:
		http.Error(w, "not found", http.StatusNotFound)
	default:
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]string{"id": id, "name": name})
	}
}

// writer inserts users (commit, then publish) until stop, and checks after
// each that GET /users/{id} finds it once the guard applied its position.
func (a *app) writer(ctx context.Context, client *http.Client, base string, stop <-chan struct{}, rep *Report) error {
	for {
		select {
		case <-stop:
			return nil
		case <-time.After(5 * time.Millisecond):
		}
		id := a.nextID.Add(1)
		a.queries.Add(1)
		if _, err := a.db.ExecContext(ctx, `INSERT INTO users (id, name) VALUES (?, ?)`, id, "new user "+strconv.FormatInt(id, 10)); err != nil {
			return err
		}
		pos, err := a.stream.Publish(ctx, "users.created", []byte(strconv.FormatInt(id, 10)))
		if err != nil {
			return err
		}
		rep.Inserted++
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err = a.g.WaitApplied(wctx, pos)
		cancel()
		if err != nil {
			return fmt.Errorf("position %d not applied: %w", pos, err)
		}
		code, err := get(client, base+"/users/"+strconv.FormatInt(id, 10))
		if err != nil {
			return err
		}
		if code == http.StatusOK {
			rep.ReadYourWrites++
		}
	}
}

// load sends c.Requests requests to prefix+id from c.Concurrency clients:
// a share c.MissShare of them for IDs that do not exist.
func load(ctx context.Context, client *http.Client, prefix string, c Config, rep *Report, guarded bool) error {
	var next atomic.Int64
	var wrong, notFound atomic.Int64
	errc := make(chan error, c.Concurrency)
	var wg sync.WaitGroup
	for w := range c.Concurrency {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(c.Seed, uint64(w)))
			for next.Add(1) <= int64(c.Requests) {
				exists := rng.Float64() >= c.MissShare
				var id int64
				if exists {
					id = 1 + rng.Int64N(int64(c.Users))
				} else {
					id = int64(c.Users) + 1 + rng.Int64N(int64(c.Users)*999)
				}
				code, err := get(client, prefix+strconv.FormatInt(id, 10))
				if err != nil {
					errc <- err
					return
				}
				if (code == http.StatusOK) != exists {
					wrong.Add(1)
				}
				if code == http.StatusNotFound {
					notFound.Add(1)
				}
			}
		})
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return err
	}
	rep.Wrong += wrong.Load()
	if guarded {
		rep.NotFound = notFound.Load()
	}
	return nil
}

func get(client *http.Client, url string) (int, error) {
	resp, err := client.Get(url)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotFound {
		return 0, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return resp.StatusCode, nil
}

func fetch(client *http.Client, url string) (string, error) {
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// Print writes the report; metrics adds the guard's Prometheus metrics.
func (r *Report) Print(w io.Writer, metrics bool) {
	c := r.Config
	s := r.Stats
	fmt.Fprintf(w, "users in the table            %d\n", c.Users)
	fmt.Fprintf(w, "requests per run              %d (%.0f%% for IDs that do not exist, %d clients)\n", c.Requests, 100*c.MissShare, c.Concurrency)
	fmt.Fprintf(w, "database queries, direct      %d (%v)\n", r.DirectQueries, r.DirectTime.Round(time.Millisecond))
	fmt.Fprintf(w, "database queries, guarded     %d (%v)\n", r.GuardedQueries, r.GuardedTime.Round(time.Millisecond))
	fmt.Fprintf(w, "database queries avoided      %d (%.1f%%; the miss share is %.0f%%)\n", r.Avoided, 100*r.Reduction, 100*c.MissShare)
	fmt.Fprintf(w, "filter negatives              %d\n", s.Negatives)
	fmt.Fprintf(w, "filter positives              %d (of which false: %d, caught by the negative cache: %d)\n", s.Positives, s.FalsePositives, s.NegativeCacheHits)
	fmt.Fprintf(w, "observed FPR                  %.4f of positives; %.4f of absent IDs (target %.4f, fill estimate %.4f)\n",
		s.ObservedFPR, s.NonMemberFPR, s.TargetFPR, s.Filter.FPR)
	fmt.Fprintf(w, "filter                        %d items, capacity %d, %d bytes, fill %.3f, version %d\n",
		s.Filter.Items, s.Capacity, s.Filter.Bytes, s.Filter.FillRatio, s.Version)
	fmt.Fprintf(w, "users inserted during the run %d, found right after WaitApplied: %d\n", r.Inserted, r.ReadYourWrites)
	fmt.Fprintf(w, "wrong answers                 %d\n", r.Wrong)
	if metrics {
		fmt.Fprintln(w, "\nguard metrics (GET /metrics):")
		for _, line := range strings.Split(r.Metrics, "\n") {
			if line != "" && !strings.HasPrefix(line, "#") {
				fmt.Fprintln(w, "  "+line)
			}
		}
	}
}
