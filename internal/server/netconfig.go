package server

import (
	"crypto/tls"
	"net"
	"strings"
	"time"

	"github.com/probly/probly/internal/config"
)

// Redis's connection and cluster parameters that probly answers (CONFIG
// GET/SET, configuration-file directives), with Redis 7.0's defaults,
// ranges and error texts (docs/OPERATIONS.md, "CONFIG parameters"):
//
//	tcp-keepalive           300  [0, 2^31−1] seconds; applied to connections
//	                             accepted from then on (setKeepAlive)
//	cluster-enabled         no   immutable: probly has no cluster mode
//	notify-keyspace-events  ""   probly publishes no keyspace notifications,
//	                             so only "" is accepted
//
// port, bind and protected-mode are the app's (internal/app): they are
// what it listens on and checks at start.
func (s *Server) netParams() []config.Param {
	return []config.Param{
		config.IntParam("tcp-keepalive", "300", 0, 1<<31-1, s.keepAlive.Store),
		{Name: "cluster-enabled", Default: "no", Immutable: true, Set: func(v string) error {
			switch strings.ToLower(v) {
			case "no":
				return nil
			case "yes":
				return config.Reason("probly has no cluster mode: cluster-enabled can only be no")
			}
			return config.Reason("argument must be 'yes' or 'no'")
		}},
		{Name: "notify-keyspace-events", Default: "", Set: func(v string) error {
			for _, ch := range v {
				if !strings.ContainsRune(keyspaceEventClasses, ch) {
					return config.Reason("Invalid event class character. Use '" + keyspaceEventClasses + "'.")
				}
			}
			if v != "" {
				return config.Reason("probly does not publish keyspace notifications: notify-keyspace-events can only be empty")
			}
			return nil
		}},
	}
}

// keyspaceEventClasses are the characters Redis 7.0 accepts in
// notify-keyspace-events (keyspaceEventsStringToFlags), in the order of
// its error text.
const keyspaceEventClasses = "Ag$lshzxeKEtmdn"

// setKeepAlive applies tcp-keepalive (secs) to a new connection as Redis's
// anetKeepAlive does: TCP keepalive probes after secs seconds idle, then
// every secs/3 seconds (at least 1), the connection dropped after 3
// unanswered ones; 0 turns them off. Like Redis it ignores a failure (a
// value above what the kernel takes leaves the options set before it).
// Connections that are not TCP (tests' pipes) are left alone.
func setKeepAlive(nc net.Conn, secs int64) {
	if t, ok := nc.(*tls.Conn); ok {
		nc = t.NetConn()
	}
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return
	}
	if secs == 0 {
		_ = tc.SetKeepAlive(false)
		return
	}
	_ = tc.SetKeepAliveConfig(net.KeepAliveConfig{
		Enable:   true,
		Idle:     time.Duration(secs) * time.Second,
		Interval: time.Duration(max(secs/3, 1)) * time.Second,
		Count:    3,
	})
}
