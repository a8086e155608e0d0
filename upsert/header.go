package upsert

import (
	"fmt"
	"strings"
)

// Header is one static record header of sink.custom-header.
type Header struct {
	Key, Value string
}

// ParseCustomHeaders parses the option sink.custom-header: entries "key:value" separated by
// ';', each split on its first ':' and trimmed of surrounding spaces, as Flink CDC's Kafka
// sink reads it. An empty option gives no headers. An entry without ':' or with an empty
// key, and a key given twice, are errors; so are the names the table headers use
// (namespace, schemaName, tableName), which would make a record ambiguous.
func ParseCustomHeaders(s string) ([]Header, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var hs []Header
	for i, entry := range strings.Split(s, ";") {
		if strings.TrimSpace(entry) == "" {
			continue // a trailing ';'
		}
		k, v, ok := strings.Cut(entry, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("upsert: sink.custom-header: entry %d %q is not key:value", i+1, entry)
		}
		switch k {
		case "namespace", "schemaName", "tableName":
			return nil, fmt.Errorf("upsert: sink.custom-header: header %q is reserved for the table headers", k)
		}
		for _, h := range hs {
			if h.Key == k {
				return nil, fmt.Errorf("upsert: sink.custom-header: header %q is given twice", k)
			}
		}
		hs = append(hs, Header{Key: k, Value: v})
	}
	return hs, nil
}
