package metrics

import "github.com/prometheus/client_golang/prometheus"

// --- key expiry ---

var (
	descExpired     = desc("expired_keys_total", "Keys deleted because their expire time passed (on access or by the active expiry cycle), since start (INFO expired_keys).")
	descKeysWithTTL = desc("keys_with_expiry", "Keys that have an expire time (INFO keyspace expires=).")
)

type expireCollector struct{ m *Metrics }

func (c *expireCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descExpired
	ch <- descKeysWithTTL
}

func (c *expireCollector) Collect(ch chan<- prometheus.Metric) {
	store := c.m.store
	if store == nil {
		return
	}
	n, _ := store.ExpireStats()
	ch <- prometheus.MustNewConstMetric(descExpired, prometheus.CounterValue, float64(store.ExpiredKeys()))
	ch <- prometheus.MustNewConstMetric(descKeysWithTTL, prometheus.GaugeValue, float64(n))
}
