package follow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/probly/probly/guard"
	"github.com/probly/probly/guard/natsstream"
)

// Config is the --follow configuration file (JSON). Example:
//
//	{
//	  "stream": "USERS",
//	  "keys": [
//	    {"key": "users", "type": "bf", "add": ["users.created"], "delete": ["users.deleted"],
//	     "capacity": 1000000, "error_rate": 0.001}
//	  ]
//	}
//
// Unknown fields are an error.
type Config struct {
	// URL of the NATS server or cluster ("nats://h1:4222,nats://h2:4222");
	// "" starts an embedded server with JetStream in the data directory.
	// The client retries an unreachable server forever, recording why in
	// INFO follow_last_error; INFO follow_source shows the URL with its
	// user information replaced by "redacted".
	URL string `json:"url"`
	// Creds is a NATS credentials file for URL (optional).
	Creds string `json:"creds"`
	// Embedded configures the embedded server (URL "").
	Embedded EmbeddedConfig `json:"embedded"`
	// Stream is the JetStream stream holding the changes. Required.
	Stream string `json:"stream"`
	// CreateStream creates the stream (file storage, no limits) if it is
	// missing and adds missing subjects to it. Default: true with the
	// embedded server, false with URL.
	CreateStream *bool `json:"create_stream"`
	// Consumer names the follower in the default position key; default
	// "probly". (The follower reads through ephemeral consumers, so
	// replicas need not differ here: leave it unset, and a copy of one
	// replica's data directory resumes on another.)
	Consumer string `json:"consumer"`
	// PositionKey is the string key holding the last applied stream
	// sequence; default "probly:follow:<stream>:<consumer>".
	PositionKey string `json:"position_key"`
	// Batch is the most messages applied at once; default 256. A message
	// never waits for a batch to fill: what arrived meanwhile is applied
	// with it.
	Batch int `json:"batch"`
	// MaxLag, if not 0, makes the followed keys answer "maybe" while more
	// than this many messages wait to be applied (the server's count). 0:
	// only before the first catch-up, while halted or stale.
	MaxLag uint64 `json:"max_lag"`
	// MaxStale makes the followed keys answer "maybe" (and /readyz 503)
	// when the follower has not heard from the stream for this long (a
	// dead or stalled NATS node, a partition): a Go duration, default "5s";
	// at least 1s.
	MaxStale Duration `json:"max_stale"`
	// AllowGap is no longer supported: a follower never skips changes. A
	// replica whose stream was truncated starts from a snapshot
	// (docs/OPERATIONS.md, "Replicas"). true is an error.
	AllowGap bool `json:"allow_gap"`
	// Snapshot configures snapshots of the followed keys in a JetStream
	// object store: publishing them (Publish) and starting a fresh replica
	// from the newest one (Bootstrap, on by default).
	Snapshot SnapshotConfig `json:"snapshot"`
	// Keys maps subjects to keys.
	Keys []KeyConfig `json:"keys"`
}

// EmbeddedConfig configures the embedded NATS server.
type EmbeddedConfig struct {
	// Listen is the client address; default 127.0.0.1:4222; "off" =
	// in-process only (nobody else can publish). The embedded server has
	// no authentication: an address that is not loopback is refused in
	// protected mode (CheckProtectedMode).
	Listen string `json:"listen"`
	// Dir is JetStream's storage directory; default <data dir>/nats.
	Dir string `json:"dir"`
	// SyncAlways makes JetStream fsync each message before acknowledging
	// its publish.
	SyncAlways bool `json:"sync_always"`
}

// KeyConfig maps subjects to one BF, CF or HLL key.
type KeyConfig struct {
	Key string `json:"key"`
	// Type is "bf" (Bloom filter), "cf" (cuckoo filter) or "pf" (an HLL,
	// PFADD of each added item).
	Type string `json:"type"`
	// Add and Delete list the subjects (literal) whose messages add or
	// delete the item in the payload. A Bloom filter and an HLL cannot
	// delete: their delete messages are counted and otherwise ignored (the
	// item stays: a false positive; counted in the cardinality).
	Add    []string `json:"add"`
	Delete []string `json:"delete"`
	// Capacity and ErrorRate, if set, create the key at start-up with
	// BF.RESERVE key <error_rate> <capacity> (CF.RESERVE key <capacity>
	// for cf) when it does not exist; otherwise it is created at start-up
	// with the bf-*/cf-* defaults (an HLL key empty). Not for pf.
	Capacity  uint64  `json:"capacity"`
	ErrorRate float64 `json:"error_rate"`
}

// Defaults.
const (
	DefaultConsumer = "probly"
	DefaultBatch    = 256
	maxBatch        = 10000
	// DefaultMaxStale is MaxStale's default.
	DefaultMaxStale = 5 * time.Second
)

// Duration is a time.Duration written in JSON as a Go duration string
// ("5s", "1m30s").
type Duration time.Duration

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("a duration must be a string such as \"5s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// LoadConfig reads and validates a configuration file. dataDir is the
// server's data directory (for the embedded server's default).
func LoadConfig(path, dataDir string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("follow: %w", err)
	}
	return ParseConfig(b, dataDir)
}

// ParseConfig decodes and validates a configuration.
func ParseConfig(b []byte, dataDir string) (*Config, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("follow: config: %w", err)
	}
	if dec.More() {
		return nil, errors.New("follow: config: trailing data after the JSON object")
	}
	if err := c.normalize(dataDir); err != nil {
		return nil, fmt.Errorf("follow: config: %w", err)
	}
	return &c, nil
}

// ErrProtectedMode is wrapped by CheckProtectedMode's refusal.
var ErrProtectedMode = errors.New("follow: protected mode")

// CheckProtectedMode applies the server's protected-mode rule to the
// --follow configuration file at path (dataDir as for LoadConfig): the
// embedded NATS server has no authentication, so with "url" unset its
// "embedded.listen" address must be "off" or a loopback address; otherwise
// anyone who can reach it could publish changes (adding or deleting items
// of the followed keys) and read the stream. It returns nil for path ""
// and for a configuration with "url" (the external server's own
// authentication applies), LoadConfig's error for a file it cannot load,
// and an error wrapping ErrProtectedMode, with the remedies, for a
// non-loopback listener. isLoopback reports whether every address
// host:port can bind to is a loopback address (the rule --addr follows).
// The caller skips the check when protected mode is off. Cost: reading and
// parsing the file, plus isLoopback (which may resolve a host name).
func CheckProtectedMode(path, dataDir string, isLoopback func(hostport string) bool) error {
	if path == "" {
		return nil
	}
	c, err := LoadConfig(path, dataDir)
	if err != nil {
		return err
	}
	return c.checkProtectedMode(isLoopback)
}

func (c *Config) checkProtectedMode(isLoopback func(string) bool) error {
	if c.URL != "" || c.Embedded.Listen == "off" || isLoopback(c.Embedded.Listen) {
		return nil
	}
	return fmt.Errorf("%w: the embedded NATS server would listen on %s, which is not a loopback address, and it has no "+
		"authentication, so anyone who can reach it could change the followed keys; set \"embedded\": {\"listen\": \"%s\"} "+
		"(or \"off\"), point \"url\" at a NATS server with authentication (\"creds\"), or pass --protected-mode=no",
		ErrProtectedMode, c.Embedded.Listen, natsstream.DefaultListen)
}

// binding is what one subject does.
type binding struct {
	key int // index in Config.Keys
	op  guard.Op
}

func (c *Config) normalize(dataDir string) error {
	if c.Stream == "" {
		return errors.New(`"stream" is required`)
	}
	if strings.ContainsAny(c.Stream, ".*> \t\r\n") {
		return fmt.Errorf("stream name %q may not contain '.', '*', '>' or white space", c.Stream)
	}
	if c.Consumer == "" {
		c.Consumer = DefaultConsumer
	}
	if strings.ContainsAny(c.Consumer, ".*> \t\r\n/\\") {
		return fmt.Errorf("consumer name %q may not contain '.', '*', '>', slashes or white space", c.Consumer)
	}
	if c.PositionKey == "" {
		c.PositionKey = "probly:follow:" + c.Stream + ":" + c.Consumer
	}
	switch {
	case c.Batch == 0:
		c.Batch = DefaultBatch
	case c.Batch < 0 || c.Batch > maxBatch:
		return fmt.Errorf(`"batch" must be in [1, %d], not %d`, maxBatch, c.Batch)
	}
	if c.AllowGap {
		return errors.New(`"allow_gap" is no longer supported: a follower never skips changes; ` +
			`start a replica of a truncated stream from a snapshot ("snapshot", docs/OPERATIONS.md "Replicas")`)
	}
	switch {
	case c.MaxStale == 0:
		c.MaxStale = Duration(DefaultMaxStale)
	case time.Duration(c.MaxStale) < time.Second:
		return fmt.Errorf(`"max_stale" must be at least 1s, not %s`, time.Duration(c.MaxStale))
	}
	c.Snapshot.spoolDir = dataDir
	if err := c.Snapshot.normalize(); err != nil {
		return err
	}
	if c.URL == "" {
		if c.Embedded.Dir == "" {
			c.Embedded.Dir = filepath.Join(dataDir, "nats")
		}
		if c.Embedded.Listen == "" {
			c.Embedded.Listen = natsstream.DefaultListen
		}
		if c.Creds != "" {
			return errors.New(`"creds" needs "url" (the embedded server has no authentication)`)
		}
	} else if c.Embedded != (EmbeddedConfig{}) {
		return errors.New(`"embedded" and "url" exclude each other`)
	}
	if c.CreateStream == nil {
		v := c.URL == ""
		c.CreateStream = &v
	}
	if len(c.Keys) == 0 {
		return errors.New(`"keys" must map at least one subject to a key`)
	}
	keys := map[string]bool{c.PositionKey: true}
	subjects := map[string]bool{}
	for i := range c.Keys {
		k := &c.Keys[i]
		if err := checkKeyName(k.Key); err != nil {
			return fmt.Errorf("keys[%d]: %w", i, err)
		}
		if keys[k.Key] {
			if k.Key == c.PositionKey {
				return fmt.Errorf("keys[%d]: %q is the position key", i, k.Key)
			}
			return fmt.Errorf("keys[%d]: key %q listed twice", i, k.Key)
		}
		keys[k.Key] = true
		k.Type = strings.ToLower(k.Type)
		if k.Type != "bf" && k.Type != "cf" && k.Type != "pf" {
			return fmt.Errorf("keys[%d] (%s): \"type\" must be \"bf\", \"cf\" or \"pf\", not %q", i, k.Key, k.Type)
		}
		if k.Type == "pf" && (k.Capacity != 0 || k.ErrorRate != 0) {
			return fmt.Errorf("keys[%d] (%s): \"capacity\" and \"error_rate\" do not apply to pf keys", i, k.Key)
		}
		if len(k.Add) == 0 {
			return fmt.Errorf("keys[%d] (%s): at least one \"add\" subject is required", i, k.Key)
		}
		for _, subj := range append(append([]string(nil), k.Add...), k.Delete...) {
			if subjects[subj] {
				return fmt.Errorf("keys[%d] (%s): subject %q is mapped twice", i, k.Key, subj)
			}
			subjects[subj] = true
		}
		if k.ErrorRate != 0 && k.Type == "cf" {
			return fmt.Errorf("keys[%d] (%s): \"error_rate\" applies to bf keys only", i, k.Key)
		}
		if k.ErrorRate != 0 && !(k.ErrorRate > 0 && k.ErrorRate < 1) || math.IsNaN(k.ErrorRate) {
			return fmt.Errorf("keys[%d] (%s): \"error_rate\" must be in (0, 1)", i, k.Key)
		}
		if k.ErrorRate != 0 && k.Capacity == 0 {
			return fmt.Errorf("keys[%d] (%s): \"error_rate\" needs \"capacity\"", i, k.Key)
		}
		if k.Type == "bf" && k.Capacity != 0 && k.ErrorRate == 0 {
			k.ErrorRate = 0.01
		}
	}
	// The subjects must be literal (natsstream validates them).
	ops := map[string]guard.Op{}
	for _, k := range c.Keys {
		for _, s := range k.Add {
			ops[s] = guard.OpAdd
		}
		for _, s := range k.Delete {
			ops[s] = guard.OpDelete
		}
	}
	if _, err := natsstream.New(nil, c.Stream, ops); err != nil {
		return err
	}
	return nil
}

// checkKeyName keeps INFO lines parseable: no white space, control
// characters, ',' or '='.
func checkKeyName(k string) error {
	if k == "" {
		return errors.New(`"key" is required`)
	}
	for i := 0; i < len(k); i++ {
		if c := k[i]; c <= ' ' || c == 0x7f || c == ',' || c == '=' {
			return fmt.Errorf("key name %q may not contain white space, control characters, ',' or '='", k)
		}
	}
	return nil
}

// bindings maps each subject to its key and op.
func (c *Config) bindings() map[string]binding {
	m := map[string]binding{}
	for i, k := range c.Keys {
		for _, s := range k.Add {
			m[s] = binding{i, guard.OpAdd}
		}
		for _, s := range k.Delete {
			m[s] = binding{i, guard.OpDelete}
		}
	}
	return m
}

// subjects returns every mapped subject.
func (c *Config) subjects() []string {
	var out []string
	for _, k := range c.Keys {
		out = append(out, k.Add...)
		out = append(out, k.Delete...)
	}
	return out
}
