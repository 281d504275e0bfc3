package generic

import (
	"errors"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/config"
	"github.com/probly/probly/internal/keyspace"
)

func info(c *command.Ctx) {
	sections := make([]string, 0, len(c.Args)-1)
	for _, a := range c.Args[1:] {
		sections = append(sections, string(a))
	}
	verbatim(c.R, c.Server.Info(strings.Join(sections, " ")))
}

func timeCmd(c *command.Ctx) {
	now := time.Now()
	c.R.Array(2)
	c.R.BulkString(strconv.FormatInt(now.Unix(), 10))
	c.R.BulkString(strconv.FormatInt(int64(now.Nanosecond()/1000), 10))
}

func save(c *command.Ctx) {
	if err := c.Server.Save(); err != nil {
		c.R.Error("ERR " + err.Error())
		return
	}
	c.R.OK()
}

// bgsave implements BGSAVE [SCHEDULE]; SCHEDULE behaves like plain BGSAVE.
func bgsave(c *command.Ctx) {
	if len(c.Args) > 2 || (len(c.Args) == 2 && lower(c.Args[1]) != "schedule") {
		c.R.Error(errSyntax)
		return
	}
	if err := c.Server.BGSave(); err != nil {
		c.R.Error("ERR " + err.Error())
		return
	}
	if c.Conn.Tx != nil && c.Conn.Tx.Executing() {
		// Redis: the snapshot starts after the transaction (the cut is
		// never inside one).
		c.R.SimpleString("Background saving scheduled")
		return
	}
	c.R.SimpleString("Background saving started")
}

// bgrewriteaof implements BGREWRITEAOF. In probly an AOF rewrite is a
// snapshot (it compacts the AOF: docs/OPERATIONS.md), so it starts what
// BGSAVE starts, with Redis's replies for a rewrite; a snapshot already
// running is a rewrite in progress, as INFO's aof_rewrite_in_progress says.
func bgrewriteaof(c *command.Ctx) {
	if err := c.Server.BGSave(); err != nil {
		if errors.Is(err, command.ErrSnapshotRunning) {
			c.R.Error("ERR Background append only file rewriting already in progress")
			return
		}
		c.R.Error("ERR " + err.Error())
		return
	}
	if c.Conn.Tx != nil && c.Conn.Tx.Executing() {
		c.R.SimpleString("Background append only file rewriting scheduled")
		return
	}
	c.R.SimpleString("Background append only file rewriting started")
}

func lastsave(c *command.Ctx) { c.R.Int(c.Server.LastSave()) }

// --- CONFIG ---

// configGet implements CONFIG GET pattern [pattern …]: RESP3 map, RESP2
// flat name/value array, names sorted, each parameter once. As Redis 7.0
// (configGetCommand), a pattern without glob characters (*, ? or [) is
// looked up directly and answered with the name as the client spelled it
// (CONFIG GET MAXCLIENTS → "MAXCLIENTS"); a glob answers with the
// parameters' own names; a parameter that several patterns name keeps the
// first spelling.
func configGet(c *command.Ctx) {
	type entry struct{ name, value string }
	seen := map[string]entry{} // by the parameter's own name
	for _, p := range c.Args[2:] {
		pattern := string(p)
		if !strings.ContainsAny(pattern, "*?[") {
			name := strings.ToLower(pattern)
			if _, dup := seen[name]; dup {
				continue
			}
			if v, ok := c.Config.Get(name); ok {
				seen[name] = entry{pattern, v}
			}
			continue
		}
		for _, kv := range c.Config.Match(pattern, keyspace.Match) {
			if _, dup := seen[kv[0]]; !dup {
				seen[kv[0]] = entry{kv[0], kv[1]}
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	c.R.Map(len(names))
	for _, n := range names {
		c.R.BulkString(seen[n].name)
		c.R.BulkString(seen[n].value)
	}
}

// configSet implements CONFIG SET name value [name value …] atomically: if
// any value is rejected, the ones already applied are restored. As Redis
// (configSetCommand), the names are checked in order first and the first
// unknown, immutable (config.Param.Immutable) or repeated one is the
// reply, before any value is looked at.
func configSet(c *command.Ctx) {
	if len(c.Args)%2 != 0 {
		c.R.Error(errSyntax)
		return
	}
	type change struct{ name, value, old string }
	var changes []change
	seen := map[string]bool{}
	for i := 2; i < len(c.Args); i += 2 {
		given := string(c.Args[i])
		name := strings.ToLower(given)
		old, ok := c.Config.Get(name)
		reason := ""
		switch {
		case !ok:
			c.R.Error("ERR Unknown option or number of arguments for CONFIG SET - '" + given + "'")
			return
		case c.Config.Immutable(name):
			reason = string(config.ErrImmutable)
		case seen[name]:
			reason = "duplicate parameter"
		}
		if reason != "" {
			c.R.Error("ERR CONFIG SET failed (possibly related to argument '" + given + "') - " + reason)
			return
		}
		seen[name] = true
		changes = append(changes, change{name, string(c.Args[i+1]), old})
	}
	for i, ch := range changes {
		if err := c.Config.Set(ch.name, ch.value); err != nil {
			for j := i - 1; j >= 0; j-- {
				_ = c.Config.Set(changes[j].name, changes[j].old)
			}
			msg := err.Error()
			if errors.Is(err, config.ErrUnknown) {
				msg = "Unknown option"
			}
			c.R.Error("ERR CONFIG SET failed (possibly related to argument '" + ch.name + "') - " + msg)
			return
		}
	}
	c.R.OK()
}

// configRewrite implements CONFIG REWRITE (config.Registry.Rewrite).
// Errors are Redis's: "ERR The server is running without a config file",
// "ERR Rewriting config file: <reason>".
func configRewrite(c *command.Ctx) {
	if err := c.Config.Rewrite(); err != nil {
		if errors.Is(err, config.ErrNoFile) {
			c.R.Error("ERR " + err.Error())
			return
		}
		c.R.Error("ERR Rewriting config file: " + err.Error())
		return
	}
	c.R.OK()
}

func configResetStat(c *command.Ctx) {
	if r, ok := c.Server.(interface{ ResetStats() }); ok {
		r.ResetStats()
	}
	c.R.OK()
}

var configHelp = []string{
	"CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"GET <pattern>",
	"    Return parameters matching the glob-like <pattern> and their values.",
	"SET <directive> <value>",
	"    Set the configuration <directive> to <value>.",
	"RESETSTAT",
	"    Reset statistics reported by the INFO command.",
	"REWRITE",
	"    Rewrite the configuration file.",
	"HELP",
	"    Prints this help.", // sic: Redis 7's CONFIG HELP
}
