package metrics

import "github.com/prometheus/client_golang/prometheus"

// ACL denials: read from server.Stats when Prometheus scrapes, by reason
// only (never a user, command argument or key).

var descACLDenials = desc("acl_denials_total", "Commands and AUTH attempts the ACL refused since start (or CONFIG RESETSTAT), by reason (command: the user may not run it; key: a key outside the user's patterns; auth: wrong user or password).", "reason")

type aclCollector struct{ m *Metrics }

func (c *aclCollector) Describe(ch chan<- *prometheus.Desc) { ch <- descACLDenials }

func (c *aclCollector) Collect(ch chan<- prometheus.Metric) {
	p := c.m.srv.Load()
	if p == nil {
		return
	}
	st := (*p).Stats()
	for _, x := range []struct {
		reason string
		n      uint64
	}{{"command", st.ACLDeniedCommands}, {"key", st.ACLDeniedKeys}, {"auth", st.ACLDeniedAuth}} {
		ch <- prometheus.MustNewConstMetric(descACLDenials, prometheus.CounterValue, float64(x.n), x.reason)
	}
}
