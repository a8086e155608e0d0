package runner

import (
	"encoding/json"
	"testing"
)

func TestExtraRoundTrip(t *testing.T) {
	var c extraCache
	snap, schema, shapes := []byte(`{"done":true}`), []byte(`{"tables":{}}`), []byte(`{"format":1}`)
	enc, err := c.encode(snap, schema, shapes)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := checkpointOf([]byte("file=b.1:4"), enc)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Position != "file=b.1:4" || string(cp.Snapshot) != string(snap) || string(cp.Schema) != string(schema) ||
		string(cp.Shapes) != string(shapes) {
		t.Fatalf("checkpoint %+v", cp)
	}
	again, _ := c.encode(snap, schema, shapes)
	if &again[0] != &enc[0] {
		t.Error("unchanged parts were encoded again")
	}
	changed, _ := c.encode(nil, []byte(`{"tables":{"a":1}}`), nil)
	var e extra
	if err := json.Unmarshal(changed, &e); err != nil || e.Snapshot != nil || string(e.Schema) != `{"tables":{"a":1}}` {
		t.Fatalf("re-encoded %s: %v", changed, err)
	}
}
