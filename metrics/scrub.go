package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// ScrubLabels makes the handler pass every label value through scrub before it is served,
// so that a secret in a table, topic or pipeline name (docs/pipeline.md, "Placeholders")
// never reaches a scraper. Call it before Serve or Handler.
func (m *Metrics) ScrubLabels(scrub func(string) string) { m.scrub = scrub }

// Gatherer returns what Handler serves: the registry, with ScrubLabels its labels scrubbed.
// A process that runs several pipelines (`ingest serve`) gathers theirs together.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.gatherer() }

// gatherer returns the registry, or, with ScrubLabels, a gatherer that scrubs its labels.
func (m *Metrics) gatherer() prometheus.Gatherer {
	if m.scrub == nil {
		return m.reg
	}
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		mfs, err := m.reg.Gather()
		for _, mf := range mfs {
			for _, metric := range mf.GetMetric() {
				// The pairs are shared with the registry's metrics: replace, never modify.
				labels := make([]*dto.LabelPair, len(metric.GetLabel()))
				for i, lp := range metric.GetLabel() {
					v := m.scrub(lp.GetValue())
					labels[i] = &dto.LabelPair{Name: lp.Name, Value: &v}
				}
				metric.Label = labels
			}
		}
		return mfs, err
	})
}
