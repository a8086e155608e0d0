package consumer

import (
	"encoding/json"
	"io"
	"math"
	"strconv"

	"github.com/ingestkit/ingest/change"
)

// JSONSchemaOf returns a JSON Schema (draft 2020-12) of the record values of topic t: the
// row object of upsert-kafka (a tombstone, a record without a value, is a delete), or the
// debezium-json or canal-json envelope of the kafka sink.
func JSONSchemaOf(t Topic, s Sink) map[string]any {
	cols := union(t, s.Format)
	key := map[string]bool{}
	if len(t.Tables) > 0 {
		for _, k := range t.Tables[0].Key {
			key[k] = true
		}
	}
	props := map[string]any{}
	order := make([]string, 0, len(cols))
	var required []string
	for _, m := range cols {
		var c Column
		for _, tb := range t.Tables {
			for _, tc := range tb.Columns {
				if tc.Name == m.name && c.Name == "" {
					c = tc
				}
			}
		}
		sch := valueSchema(c, s)
		if m.diff {
			sch = map[string]any{}
		}
		if !key[m.name] {
			sch = nullable(sch)
		}
		props[m.name] = sch
		order = append(order, m.name)
		if m.in == len(t.Tables) {
			required = append(required, m.name)
		}
	}
	row := map[string]any{"type": "object", "properties": props, "required": required, "x-column-order": order}
	out := map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"title":   t.Name,
	}
	switch s.ValueFormat {
	case "debezium-json":
		out["description"] = "debezium-json change events of ingest's kafka sink (docs/output.md)"
		out["type"] = "object"
		out["$defs"] = map[string]any{"row": row}
		ref := map[string]any{"oneOf": []any{map[string]any{"$ref": "#/$defs/row"}, map[string]any{"type": "null"}}}
		out["properties"] = map[string]any{
			"before": ref, "after": ref,
			"op": map[string]any{"enum": []string{"c", "u", "d"}},
			"source": map[string]any{"type": "object", "properties": map[string]any{
				"db": map[string]any{"type": []string{"string", "null"}}, "table": map[string]any{"type": "string"}}},
		}
		out["required"] = []string{"before", "after", "op", "source"}
	case "canal-json":
		out["description"] = "canal-json change events of ingest's kafka sink (docs/output.md)"
		out["type"] = "object"
		out["$defs"] = map[string]any{"row": row}
		rows := map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/row"}}
		out["properties"] = map[string]any{
			"old": map[string]any{"oneOf": []any{rows, map[string]any{"type": "null"}}}, "data": rows,
			"type":     map[string]any{"enum": []string{"INSERT", "UPDATE", "DELETE"}},
			"database": map[string]any{"type": []string{"string", "null"}}, "table": map[string]any{"type": "string"},
			"pkNames": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		}
		out["required"] = []string{"old", "data", "type", "database", "table", "pkNames"}
	default:
		out["description"] = "upsert-kafka rows of ingest (docs/output.md); a record without a value (tombstone) deletes its key"
		for k, v := range row {
			out[k] = v
		}
	}
	return out
}

// WriteJSONSchema writes {"<topic>": <schema>, …} as indented JSON.
func WriteJSONSchema(w io.Writer, topics []Topic, s Sink) error {
	all := map[string]any{}
	for _, t := range topics {
		all[t.Name] = JSONSchemaOf(t, s)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(all)
}

func nullable(s map[string]any) map[string]any {
	if len(s) == 0 {
		return s
	}
	return map[string]any{"oneOf": []any{s, map[string]any{"type": "null"}}}
}

// valueSchema is the schema of one column's non-null values.
func valueSchema(c Column, s Sink) map[string]any {
	ft := FlinkTypeOf(c, s.Format)
	sep := " "
	if s.TimestampStandard == "ISO-8601" {
		sep = "T"
	}
	clock := `[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?`
	switch c.Kind {
	case change.Bool:
		return map[string]any{"type": "boolean"}
	case change.Int, change.Uint:
		lo, hi := intRange(baseType(c.SQLType), c.Unsigned)
		if s.Events && hi == "18446744073709551615" {
			return map[string]any{"type": "number", "minimum": 0, "description": "DECIMAL(20,0): 1E+19 for 10000000000000000000"}
		}
		return map[string]any{"type": "integer", "minimum": json.Number(lo), "maximum": json.Number(hi)}
	case change.Float32, change.Float64:
		return map[string]any{"type": "number"}
	case change.Decimal:
		if ft.SQL == "STRING" || s.DecimalAsString {
			return map[string]any{"type": "string", "pattern": `^-?[0-9]+(\.[0-9]+)?$`}
		}
		return map[string]any{"type": "number", "description": "exact decimal: read as BigDecimal, not as a double"}
	case change.Date:
		return map[string]any{"type": "string", "format": "date", "description": "NULL for a zero date"}
	case change.DateTime:
		return map[string]any{"type": "string", "pattern": `^[0-9]{4}-[0-9]{2}-[0-9]{2}` + sep + clock + `$`, "description": "wall clock; NULL for a zero date"}
	case change.Timestamp:
		return map[string]any{"type": "string", "pattern": `^[0-9]{4}-[0-9]{2}-[0-9]{2}` + sep + clock + `Z$`, "description": "UTC instant; NULL for the zero timestamp"}
	case change.Time:
		if s.TimeMicros {
			return map[string]any{"type": "integer", "minimum": -3020399999999, "maximum": 3020399999999, "description": "TIME as signed microseconds"}
		}
		return map[string]any{"type": "string", "pattern": `^-?[0-9]{2,3}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?$`}
	case change.Bytes:
		return map[string]any{"type": "string", "contentEncoding": "base64"}
	case change.JSON:
		if s.JSONAsObject {
			return map[string]any{"description": "the JSON document itself (json.encode.json-column-as: object)"}
		}
		return map[string]any{"type": "string", "contentMediaType": "application/json"}
	case change.Geometry:
		return map[string]any{"type": "string", "contentMediaType": "application/geo+json"}
	}
	return map[string]any{"type": "string"}
}

// intRange is the range of an integer column, as JSON number text.
func intRange(base string, unsigned bool) (lo, hi string) {
	bits := map[string]int{"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "integer": 32, "bigint": 64}[base]
	if base == "year" {
		return "0", "2155"
	}
	if bits == 0 {
		bits = 64
	}
	if unsigned {
		if bits == 64 {
			return "0", strconv.FormatUint(math.MaxUint64, 10)
		}
		return "0", strconv.FormatUint(1<<bits-1, 10)
	}
	return strconv.FormatInt(-1<<(bits-1), 10), strconv.FormatInt(1<<(bits-1)-1, 10)
}
