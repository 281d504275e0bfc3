package server

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/probly/probly/internal/command"
	"github.com/probly/probly/internal/config"
)

// infoSection is one INFO section in Redis's output order.
type infoSection struct {
	name, title string
	write       func(s *Server, b *infoBuf)
	notDefault  bool // only with "all", "everything" or by name (Redis: commandstats)
}

var infoSections = []infoSection{
	{"server", "Server", (*Server).infoServer, false},
	{"clients", "Clients", (*Server).infoClients, false},
	{"memory", "Memory", (*Server).infoMemory, false},
	{"persistence", "Persistence", (*Server).infoPersistence, false},
	{"stats", "Stats", (*Server).infoStats, false},
	{"replication", "Replication", (*Server).infoReplication, false},
	{"cpu", "CPU", (*Server).infoCPU, false},
	{"modules", "Modules", (*Server).infoModules, false},
	{"commandstats", "Commandstats", (*Server).infoCommandStats, true},
	{"errorstats", "Errorstats", (*Server).infoErrorStats, false},
	{"cluster", "Cluster", (*Server).infoCluster, false},
	{"keyspace", "Keyspace", (*Server).infoKeyspace, false},
}

// Info implements command.Server. section is a space-separated list of
// section names (case-insensitive) and/or "default", "all", "everything";
// "" means default. Every section probly has is in "default". Sections are
// emitted in Redis's fixed order whatever the argument order; unknown
// names are ignored (an all-unknown request yields "").
func (s *Server) Info(section string) string {
	fields := strings.Fields(strings.ToLower(section))
	def := len(fields) == 0
	all := false
	want := make(map[string]bool, len(fields))
	for _, f := range fields {
		switch f {
		case "default":
			def = true
		case "all", "everything":
			def, all = true, true
		default:
			want[f] = true
		}
	}
	b := &infoBuf{}
	n := 0
	for _, sec := range infoSections {
		if !want[sec.name] && !all && (!def || sec.notDefault) {
			continue
		}
		if n > 0 {
			b.WriteString("\r\n")
		}
		n++
		b.WriteString("# " + sec.title + "\r\n")
		sec.write(s, b)
	}
	for _, sec := range s.extraInfo {
		if !def && !want[sec.name] {
			continue
		}
		if n > 0 {
			b.WriteString("\r\n")
		}
		n++
		b.WriteString("# " + sec.title + "\r\n")
		sec.write(b.kv)
	}
	return b.String()
}

// extraInfoSection is an INFO section added by the embedding program.
type extraInfoSection struct {
	name, title string
	write       func(kv func(key string, value any))
}

// AddInfoSection adds an INFO section after the built-in ones: name is
// what INFO <section> selects (lowercase), title its heading, and write
// emits its fields through kv (values as in the built-in sections: string,
// integers, bool as 0/1). Like the built-in sections it is part of
// "default" and "all". Call it before Serve.
func (s *Server) AddInfoSection(name, title string, write func(kv func(key string, value any))) {
	s.extraInfo = append(s.extraInfo, extraInfoSection{name: strings.ToLower(name), title: title, write: write})
}

type infoBuf struct{ strings.Builder }

func (b *infoBuf) kv(k string, v any) {
	b.WriteString(k)
	b.WriteByte(':')
	switch x := v.(type) {
	case string:
		b.WriteString(x)
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case uint64:
		b.WriteString(strconv.FormatUint(x, 10))
	case bool:
		if x {
			b.WriteByte('1')
		} else {
			b.WriteByte('0')
		}
	default:
		fmt.Fprint(b, x)
	}
	b.WriteString("\r\n")
}

func (s *Server) port() int {
	if a, ok := s.Addr().(*net.TCPAddr); ok && a != nil {
		return a.Port
	}
	return 0
}

func (s *Server) infoServer(b *infoBuf) {
	exe, _ := os.Executable()
	up := time.Since(s.start)
	b.kv("redis_version", command.RedisVersion)
	b.kv("redis_git_sha1", "00000000")
	b.kv("redis_git_dirty", 0)
	b.kv("redis_build_id", "0")
	b.kv("redis_mode", "standalone")
	b.kv("os", runtime.GOOS+" "+runtime.GOARCH)
	b.kv("arch_bits", strconv.IntSize)
	b.kv("monotonic_clock", "POSIX clock_gettime")
	b.kv("multiplexing_api", "goroutines")
	b.kv("go_version", runtime.Version())
	b.kv("process_id", os.Getpid())
	b.kv("run_id", s.runID)
	b.kv("tcp_port", s.port())
	b.kv("server_time_usec", time.Now().UnixMicro())
	b.kv("uptime_in_seconds", int64(up/time.Second))
	b.kv("uptime_in_days", int64(up/(24*time.Hour)))
	b.kv("hz", 10)
	b.kv("configured_hz", 10)
	b.kv("executable", exe)
	b.kv("config_file", "")
	b.kv("io_threads_active", 0)
	b.kv("probly_version", s.version)
}

// infoClients is Redis 7.0's Clients section, then probly's own limits
// (proto_max_bulk_len, proto_max_multibulk_len, client_query_buffer_limit)
// and pubsub_clients (Redis 7.4).
func (s *Server) infoClients(b *infoBuf) {
	var maxIn int64
	for _, c := range s.clients() {
		maxIn = max(maxIn, c.held.Load())
	}
	b.kv("connected_clients", s.connected.Load())
	b.kv("cluster_connections", 0)
	b.kv("maxclients", s.maxClients.Load())
	// The largest input buffer counted (above the 32 KiB a connection
	// holds anyway), now; the largest omem of the last 8 s (reply.go).
	b.kv("client_recent_max_input_buffer", maxIn)
	b.kv("client_recent_max_output_buffer", s.outPeak.max())
	b.kv("blocked_clients", 0)
	b.kv("tracking_clients", 0)
	b.kv("clients_in_timeout_table", 0)
	b.kv("proto_max_bulk_len", s.lim.maxBulk.Load())
	b.kv("proto_max_multibulk_len", s.lim.maxArgs.Load())
	b.kv("client_query_buffer_limit", s.lim.maxQuery.Load())
	b.kv("pubsub_clients", 0)
}

func (s *Server) infoMemory(b *infoBuf) {
	used := s.UsedMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	maxmem := s.MaxMemory()
	b.kv("used_memory", used)
	b.kv("used_memory_human", humanBytes(used))
	rss, ok := processRSS() // the resident set, as Redis; else what Go obtained from the OS
	if !ok {
		rss = ms.Sys
	}
	b.kv("used_memory_rss", rss)
	b.kv("used_memory_rss_human", humanBytes(rss))
	b.kv("used_memory_heap", ms.HeapAlloc)
	b.kv("mem_clients_normal", s.ClientsMemory())
	b.kv("maxmemory", maxmem)
	b.kv("maxmemory_human", humanBytes(maxmem))
	b.kv("maxmemory_policy", "noeviction")
	b.kv("mem_allocator", "go")
	// Per-filter byte budgets (registered by the BF/CF command families),
	// in bytes like maxmemory even when set with a unit ("1mb").
	for _, name := range []string{"bf-max-filter-bytes", "cf-max-filter-bytes"} {
		if v, ok := s.cfg.Get(name); ok {
			if n, err := config.ParseMemory(v); err == nil {
				v = strconv.FormatUint(n, 10)
			}
			b.kv(strings.ReplaceAll(name, "-", "_"), v)
		}
	}
}

func (s *Server) infoPersistence(b *infoBuf) {
	p := s.persist
	var changes, fails uint64
	inProgress, saveOK, writeOK := false, true, true
	if p != nil {
		changes, inProgress, saveOK, writeOK = p.Changes(), p.InProgress(), p.LastSaveOK(), p.LastWriteOK()
		if c, ok := p.(interface{ ConsecutiveFailures() uint64 }); ok {
			fails = c.ConsecutiveFailures()
		}
	}
	b.kv("loading", 0)
	b.kv("async_loading", 0)
	b.kv("rdb_changes_since_last_save", changes)
	b.kv("rdb_bgsave_in_progress", inProgress)
	b.kv("rdb_last_save_time", s.LastSave())
	// A snapshot is both the RDB save and the AOF rewrite (it compacts the
	// AOF), so both statuses report the last snapshot attempt.
	b.kv("rdb_last_bgsave_status", okErr(saveOK))
	b.kv("aof_enabled", p != nil)
	b.kv("aof_rewrite_in_progress", inProgress)
	b.kv("aof_rewrite_scheduled", 0)
	b.kv("aof_last_bgrewrite_status", okErr(saveOK))
	if p != nil {
		b.kv("aof_rewrites_consecutive_failures", fails)
		b.kv("aof_last_write_status", okErr(writeOK))
		b.kv("aof_current_size", p.AOFSize())
	}
}

func okErr(ok bool) string {
	if ok {
		return "ok"
	}
	return "err"
}

// infoStats is Redis 7.0's Stats section, in its order. Fields of what
// probly does not have (replication, forks, defragmentation, client-side
// caching, I/O threads, eviction) are 0, as they are on a Redis that does
// not use them; instantaneous_* are not sampled (0).
func (s *Server) infoStats(b *infoBuf) {
	st, expired := s.statsSinceReset()
	b.kv("total_connections_received", st.TotalConnections)
	b.kv("total_commands_processed", st.TotalCommands)
	b.kv("instantaneous_ops_per_sec", 0)
	b.kv("total_net_input_bytes", st.NetInputBytes)
	b.kv("total_net_output_bytes", st.NetOutputBytes)
	b.zeros("0", "total_net_repl_input_bytes", "total_net_repl_output_bytes")
	b.zeros("0.00", "instantaneous_input_kbps", "instantaneous_output_kbps", "instantaneous_input_repl_kbps", "instantaneous_output_repl_kbps")
	b.kv("rejected_connections", st.RejectedConnections)
	b.zeros("0", "sync_full", "sync_partial_ok", "sync_partial_err")
	b.kv("expired_keys", expired)
	b.kv("expired_stale_perc", "0.00")
	b.zeros("0", "expired_time_cap_reached_count", "expire_cycle_cpu_milliseconds", "evicted_keys")
	b.kv("evicted_clients", st.EvictedClients)
	b.zeros("0", "total_eviction_exceeded_time", "current_eviction_exceeded_time", "keyspace_hits", "keyspace_misses",
		"pubsub_channels", "pubsub_patterns", "pubsubshard_channels", "latest_fork_usec", "total_forks",
		"migrate_cached_sockets", "slave_expires_tracked_keys", "active_defrag_hits", "active_defrag_misses",
		"active_defrag_key_hits", "active_defrag_key_misses", "total_active_defrag_time", "current_active_defrag_time",
		"tracking_total_keys", "tracking_total_items", "tracking_total_prefixes", "unexpected_error_replies")
	b.kv("total_error_replies", st.ErrorReplies)
	b.kv("dump_payload_sanitizations", 0)
	// One read and one reply write per batch of pipelined commands.
	b.kv("total_reads_processed", st.Batches)
	b.kv("total_writes_processed", st.Batches)
	b.zeros("0", "io_threaded_reads_processed", "io_threaded_writes_processed", "reply_buffer_shrinks", "reply_buffer_expands")
	infoACLStats(b, st)
}

// zeros writes fields that hold v because probly has no such thing.
func (b *infoBuf) zeros(v string, keys ...string) {
	for _, k := range keys {
		b.kv(k, v)
	}
}

func (s *Server) infoReplication(b *infoBuf) {
	b.kv("role", "master")
	b.kv("connected_slaves", 0)
	b.kv("master_failover_state", "no-failover")
	b.kv("master_replid", s.runID)
	b.kv("master_replid2", strings.Repeat("0", 40))
	b.kv("master_repl_offset", 0)
	b.kv("second_repl_offset", -1)
	b.kv("repl_backlog_active", 0)
}

func (s *Server) infoCPU(b *infoBuf) {
	sys, user := cpuTimes()
	b.kv("used_cpu_sys", strconv.FormatFloat(sys, 'f', 6, 64))
	b.kv("used_cpu_user", strconv.FormatFloat(user, 'f', 6, 64))
	b.kv("used_cpu_sys_children", "0.000000")
	b.kv("used_cpu_user_children", "0.000000")
}

func (s *Server) infoModules(b *infoBuf) {
	b.kv("module", "name="+command.ModuleName+",ver="+strconv.Itoa(command.ModuleVersion)+
		",api=1,filters=0,usedby=[],using=[],options=[]")
}

func (s *Server) infoCluster(b *infoBuf) {
	b.kv("cluster_enabled", 0)
}

func (s *Server) infoKeyspace(b *infoBuf) {
	if n := s.store.Len(); n > 0 {
		exp, avg := s.store.ExpireStats()
		b.kv("db0", "keys="+strconv.Itoa(n)+",expires="+strconv.Itoa(exp)+",avg_ttl="+strconv.FormatInt(avg, 10))
	}
}

// humanBytes formats like Redis's bytesToHuman.
func humanBytes(n uint64) string {
	f := float64(n)
	switch {
	case n < 1024:
		return strconv.FormatUint(n, 10) + "B"
	case n < 1<<20:
		return strconv.FormatFloat(f/(1<<10), 'f', 2, 64) + "K"
	case n < 1<<30:
		return strconv.FormatFloat(f/(1<<20), 'f', 2, 64) + "M"
	case n < 1<<40:
		return strconv.FormatFloat(f/(1<<30), 'f', 2, 64) + "G"
	case n < 1<<50:
		return strconv.FormatFloat(f/(1<<40), 'f', 2, 64) + "T"
	default:
		return strconv.FormatFloat(f/(1<<50), 'f', 2, 64) + "P"
	}
}
