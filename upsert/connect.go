package upsert

import (
	"strconv"
	"strings"

	"github.com/ingestkit/ingest/change"
)

// This file writes the schema part of debezium-json.include-schema.enabled: true as Flink
// CDC 3.6.0's DebeziumJsonSerializationSchema.convertSchemaToDebeziumSchema builds it
// (a Kafka Connect struct of two optional structs, before and after, with one field per
// column) and Kafka Connect's JsonConverter.asJsonSchema prints it: each field's keys in the
// order type, fields, optional, name, version, doc, parameters, then field (its name).
// upsert/testdata/events.md gives the derivation.

// connectType is the Kafka Connect schema of one column.
type connectType struct {
	typ    string // "int16", "bytes", …
	name   string // the logical type, "" for none (version 1 when set)
	params string // the parameters object's members, already JSON: `"length":"3"`
}

// Kafka Connect and Debezium logical type names.
const (
	connectDecimal    = "org.apache.kafka.connect.data.Decimal"
	debeziumBits      = "io.debezium.data.Bits"
	debeziumDate      = "io.debezium.time.Date"
	debeziumMicroTime = "io.debezium.time.MicroTime"
	debeziumTimestamp = "io.debezium.time.Timestamp"
	debeziumMicroTS   = "io.debezium.time.MicroTimestamp"
	debeziumZonedTS   = "io.debezium.time.ZonedTimestamp"
	// maxBytesLength is the length of Flink CDC's BYTES (VARBINARY(Integer.MAX_VALUE)),
	// which the BLOB types map to.
	maxBytesLength = "2147483647"
)

// connectTypeOf maps a column's SQL type (information_schema COLUMN_TYPE) first to the Flink
// CDC type of the MySQL pipeline source's MySqlTypeUtils.convertFromColumn, then to the
// Connect schema of convertCDCDataTypeToDebeziumDataType. tinyInt1AsNumber is the source's
// treat-tinyint1-as-boolean.enabled: false.
func connectTypeOf(sqlType string, tinyInt1AsNumber bool) connectType {
	t := strings.ToLower(strings.TrimSpace(sqlType))
	base, args := t, ""
	if i := strings.IndexAny(t, "( "); i >= 0 {
		base = t[:i]
		if t[i] == '(' {
			if j := strings.IndexByte(t[i:], ')'); j > 0 {
				args = t[i+1 : i+j]
			}
		}
	}
	unsigned := strings.Contains(t, " unsigned") || strings.Contains(t, " zerofill")
	length := func(def int) int {
		n, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(args, ",", 2)[0]))
		if err != nil {
			return def
		}
		return n
	}
	bits := func(n string) connectType {
		return connectType{typ: "bytes", name: debeziumBits, params: `"length":"` + n + `"`}
	}
	switch base {
	case "bool", "boolean":
		return connectType{typ: "boolean"}
	case "tinyint":
		if args == "1" && !tinyInt1AsNumber { // as the source decodes it: UNSIGNED too
			return connectType{typ: "boolean"}
		}
		return connectType{typ: "int16"} // TINYINT, and TINYINT UNSIGNED as SMALLINT
	case "smallint":
		if unsigned {
			return connectType{typ: "int32"}
		}
		return connectType{typ: "int16"}
	case "mediumint", "year":
		return connectType{typ: "int32"}
	case "int", "integer":
		if unsigned {
			return connectType{typ: "int64"}
		}
		return connectType{typ: "int32"}
	case "bigint", "serial":
		if unsigned || base == "serial" {
			return decimalType(20, 0)
		}
		return connectType{typ: "int64"}
	case "float":
		if args != "" { // FLOAT(M,D) and FLOAT(p): DOUBLE in Flink CDC
			return connectType{typ: "double"}
		}
		return connectType{typ: "float"}
	case "double", "real":
		return connectType{typ: "double"}
	case "decimal", "numeric", "fixed", "dec":
		p, s, _ := strings.Cut(args, ",")
		prec, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			prec = 10
		}
		scale, _ := strconv.Atoi(strings.TrimSpace(s))
		if prec > 38 {
			return connectType{typ: "string"}
		}
		return decimalType(prec, scale)
	case "date":
		return connectType{typ: "int32", name: debeziumDate}
	case "time":
		return connectType{typ: "int64", name: debeziumMicroTime}
	case "datetime":
		if length(0) > 3 {
			return connectType{typ: "int64", name: debeziumMicroTS}
		}
		return connectType{typ: "int64", name: debeziumTimestamp}
	case "timestamp":
		return connectType{typ: "string", name: debeziumZonedTS}
	case "bit":
		if n := length(1); n > 1 {
			return bits(strconv.Itoa((n + 7) / 8))
		}
		return connectType{typ: "boolean"}
	case "binary":
		return bits(strconv.Itoa(length(1)))
	case "varbinary":
		return bits(strconv.Itoa(length(0)))
	case "tinyblob", "blob", "mediumblob", "longblob", "vector":
		return bits(maxBytesLength)
	}
	// CHAR, VARCHAR, the TEXT types, JSON, ENUM, SET, the GEOMETRY types, MariaDB's UUID,
	// INET4 and INET6: strings.
	return connectType{typ: "string"}
}

func decimalType(precision, scale int) connectType {
	return connectType{typ: "bytes", name: connectDecimal,
		params: `"scale":"` + strconv.Itoa(scale) + `","connect.decimal.precision":"` + strconv.Itoa(precision) + `"`}
}

// appendConnectSchema appends the schema part of a table's debezium-json events:
// {"type":"struct","fields":[{before},{after}],"optional":false}, where before and after are
// optional structs of the columns in table order. A column is optional unless NOT NULL;
// comments, when asked, are the fields' doc.
func appendConnectSchema(dst []byte, s *change.Schema, comments, tinyInt1AsNumber bool) []byte {
	var cols []byte
	for i, c := range s.Columns {
		if i > 0 {
			cols = append(cols, ',')
		}
		ct := connectTypeOf(c.SQLType, tinyInt1AsNumber)
		cols = append(cols, `{"type":`...)
		cols = appendString(cols, []byte(ct.typ))
		cols = append(cols, `,"optional":`...)
		cols = strconv.AppendBool(cols, !c.NotNull)
		if ct.name != "" {
			cols = append(cols, `,"name":`...)
			cols = appendString(cols, []byte(ct.name))
			cols = append(cols, `,"version":1`...)
		}
		if comments && c.Comment != "" {
			cols = append(cols, `,"doc":`...)
			cols = appendString(cols, []byte(c.Comment))
		}
		if ct.params != "" {
			cols = append(cols, `,"parameters":{`...)
			cols = append(cols, ct.params...)
			cols = append(cols, '}')
		}
		cols = append(cols, `,"field":`...)
		cols = appendString(cols, []byte(c.Name))
		cols = append(cols, '}')
	}
	dst = append(dst, `{"type":"struct","fields":[`...)
	for i, image := range []string{"before", "after"} {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":"struct","fields":[`...)
		dst = append(dst, cols...)
		dst = append(dst, `],"optional":true,"field":"`...)
		dst = append(dst, image...)
		dst = append(dst, `"}`...)
	}
	return append(dst, `],"optional":false}`...)
}
