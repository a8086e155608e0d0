package metrics

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestScrubLabels(t *testing.T) {
	const secret = "shop_7Qx91"
	m := New("p-" + secret)
	m.RecordsWritten.WithLabelValues(secret+".orders", "topic-"+secret).Add(2)
	m.ScrubLabels(func(s string) string { return strings.ReplaceAll(s, secret, "${secret_values.db}") })
	for _, accept := range []string{"", "application/openmetrics-text", ""} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/metrics", nil)
		req.Header.Set("Accept", accept)
		m.Handler().ServeHTTP(rec, req)
		body := rec.Body.String()
		if strings.Contains(body, secret) ||
			!strings.Contains(body, `ingest_records_written_total{pipeline="p-${secret_values.db}",table="${secret_values.db}.orders",topic="topic-${secret_values.db}"} 2`) {
			t.Errorf("Accept %q:\n%s", accept, body)
		}
	}
	// The registry's own labels are left as they are.
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "ingest_records_written_total" && mf.GetMetric()[0].GetLabel()[1].GetValue() != secret+".orders" {
			t.Errorf("the registry's label was changed: %v", mf.GetMetric()[0].GetLabel())
		}
	}
}
