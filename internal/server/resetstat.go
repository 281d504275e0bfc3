package server

// resetPoint is the counters' values at the last CONFIG RESETSTAT: INFO
// shows the counters minus these, so INFO starts again from zero as in
// Redis while Stats (the Prometheus counters) keeps growing.
type resetPoint struct {
	stats   Stats
	expired uint64
}

// ResetStats is CONFIG RESETSTAT: the cumulative counters INFO stats shows
// (total_connections_received, total_commands_processed, net bytes,
// rejected_connections, total_error_replies, expired_keys,
// evicted_clients, acl_access_denied_*) start again from zero, as Redis's resetServerStats
// does; gauges (connected_clients, memory) and Stats are unchanged.
func (s *Server) ResetStats() {
	s.stats.reset.Store(&resetPoint{stats: s.Stats(), expired: s.store.ExpiredKeys()})
	s.resetOpsStats() // commandstats, errorstats
}

// statsSinceReset returns the counters and expired keys since the last
// ResetStats (all of them before the first).
func (s *Server) statsSinceReset() (Stats, uint64) {
	st, expired := s.Stats(), s.store.ExpiredKeys()
	p := s.stats.reset.Load()
	if p == nil {
		return st, expired
	}
	b := p.stats
	// A counter below its reset point cannot happen (they only grow);
	// sub keeps INFO from showing a wrapped number if one ever did.
	sub := func(v, base uint64) uint64 {
		if v < base {
			return 0
		}
		return v - base
	}
	st.TotalConnections = sub(st.TotalConnections, b.TotalConnections)
	st.TotalCommands = sub(st.TotalCommands, b.TotalCommands)
	st.RejectedConnections = sub(st.RejectedConnections, b.RejectedConnections)
	st.NetInputBytes = sub(st.NetInputBytes, b.NetInputBytes)
	st.NetOutputBytes = sub(st.NetOutputBytes, b.NetOutputBytes)
	st.ErrorReplies = sub(st.ErrorReplies, b.ErrorReplies)
	st.EvictedClients = sub(st.EvictedClients, b.EvictedClients)
	st.DroppedHandshakes = sub(st.DroppedHandshakes, b.DroppedHandshakes)
	st.Batches = sub(st.Batches, b.Batches)
	st.ACLDeniedCommands = sub(st.ACLDeniedCommands, b.ACLDeniedCommands)
	st.ACLDeniedKeys = sub(st.ACLDeniedKeys, b.ACLDeniedKeys)
	st.ACLDeniedAuth = sub(st.ACLDeniedAuth, b.ACLDeniedAuth)
	return st, sub(expired, p.expired)
}
