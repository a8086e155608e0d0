package consumer

import (
	"strconv"
	"strings"

	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/pipeline"
)

// Table is one captured table: its source name (db.table), its columns in table order and
// its key (the primary key, or the transform's), by column name in key order.
type Table struct {
	Source  string
	Columns []Column
	Key     []string
}

// Column is what of a captured column decides its consumer type.
type Column struct {
	Name string
	// SQLType is information_schema's COLUMN_TYPE: "decimal(20,6)", "int(10) unsigned".
	SQLType string
	// Kind is the kind of the values ingest decodes the column to.
	Kind     change.Kind
	Unsigned bool
	// Length is the bit count of BIT(n); Scale the digits of a DECIMAL's fraction or a
	// temporal type's fractional seconds.
	Length, Scale int
}

// Topic is one topic and the tables written to it, in plan order.
type Topic struct {
	Name   string
	Tables []Table
}

// Format is what of the sink's options decides a column's consumer type.
type Format struct {
	// Events is set for the kafka sink (debezium-json or canal-json change events).
	Events bool
	// TimeMicros is json.encode.time-as: micros.
	TimeMicros bool
	// DecimalAsString is json.encode.decimal-as: string (upsert-kafka only).
	DecimalAsString bool
}

// FormatOf returns the Format of a pipeline's sink.
func FormatOf(def *pipeline.Definition) Format {
	s := &def.Sink
	return Format{
		Events:          s.IsKafka(),
		TimeMicros:      s.JSON.TimeAs == pipeline.TimeAsMicros,
		DecimalAsString: !s.IsKafka() && s.JSON.DecimalAs == pipeline.DecimalAsString,
	}
}

// FlinkType is the Flink SQL type a consumer declares for one column, with a note when
// the type has a limit the consumer should know of (empty otherwise).
type FlinkType struct {
	SQL  string
	Note string
}

// MaxFlinkDecimal is the largest precision of Flink's DECIMAL.
const MaxFlinkDecimal = 38

// FlinkTypeOf returns the Flink SQL type that reads the column's values as ingest writes
// them in format f (docs/output.md, "The consumer's side").
func FlinkTypeOf(c Column, f Format) FlinkType {
	base := baseType(c.SQLType)
	switch c.Kind {
	case change.Bool:
		return FlinkType{SQL: "BOOLEAN"}
	case change.Int:
		return FlinkType{SQL: intType(base, c.Unsigned)}
	case change.Float32:
		return FlinkType{SQL: "FLOAT"}
	case change.Float64:
		return FlinkType{SQL: "DOUBLE"}
	case change.Decimal:
		p, s := decimalPrecision(c)
		if p > MaxFlinkDecimal {
			return FlinkType{SQL: "STRING", Note: "DECIMAL(" + strconv.Itoa(p) + "," + strconv.Itoa(s) +
				") exceeds Flink's 38 digits; json.encode.decimal-as: string keeps its exact text"}
		}
		return FlinkType{SQL: "DECIMAL(" + strconv.Itoa(p) + "," + strconv.Itoa(s) + ")"}
	case change.Date:
		return FlinkType{SQL: "DATE"}
	case change.DateTime:
		return FlinkType{SQL: "TIMESTAMP(" + strconv.Itoa(c.Scale) + ")"}
	case change.Timestamp:
		return FlinkType{SQL: "TIMESTAMP_LTZ(" + strconv.Itoa(c.Scale) + ")"}
	case change.Time:
		if f.TimeMicros {
			return FlinkType{SQL: "BIGINT", Note: "TIME as signed microseconds (json.encode.time-as: micros)"}
		}
		return FlinkType{SQL: "STRING", Note: "TIME as text ([-]HH:mm:ss[.f], up to ±838:59:59) - Flink's TIME holds 00:00:00-23:59:59 and no fraction"}
	case change.Bytes:
		if base == "bit" && c.Length == 1 {
			return FlinkType{SQL: "BOOLEAN"}
		}
		if base == "bit" {
			if f.Events {
				return FlinkType{SQL: "BYTES", Note: "BIT(" + strconv.Itoa(c.Length) + ") bytes little-endian, as Debezium delivers them"}
			}
			return FlinkType{SQL: "BYTES", Note: "BIT(" + strconv.Itoa(c.Length) + ") bytes big-endian"}
		}
		return FlinkType{SQL: "BYTES"}
	}
	// Strings, ENUM, SET, JSON, geometry, UUID, INET4, INET6.
	return FlinkType{SQL: "STRING"}
}

// baseType returns the type name of a COLUMN_TYPE: "int(10) unsigned" → "int".
func baseType(sqlType string) string {
	t := strings.ToLower(sqlType)
	if i := strings.IndexAny(t, "( "); i >= 0 {
		t = t[:i]
	}
	return t
}

// intType maps an integer column: the smallest Flink type that holds its range.
func intType(base string, unsigned bool) string {
	switch base {
	case "tinyint":
		if unsigned {
			return "SMALLINT"
		}
		return "TINYINT"
	case "smallint":
		if unsigned {
			return "INT"
		}
		return "SMALLINT"
	case "mediumint", "year":
		return "INT"
	case "bigint":
		if unsigned {
			return "DECIMAL(20,0)"
		}
		return "BIGINT"
	}
	if unsigned {
		return "BIGINT"
	}
	return "INT"
}

// decimalPrecision returns the precision and scale of a DECIMAL column from its
// COLUMN_TYPE ("decimal(20,6) unsigned zerofill"); MySQL's default is (10,0).
func decimalPrecision(c Column) (p, s int) {
	t := strings.ToLower(c.SQLType)
	open := strings.IndexByte(t, '(')
	end := strings.IndexByte(t, ')')
	if open < 0 || end < open {
		return 10, c.Scale
	}
	ps, ss, _ := strings.Cut(t[open+1:end], ",")
	p, err := strconv.Atoi(strings.TrimSpace(ps))
	if err != nil {
		return 10, c.Scale
	}
	s, _ = strconv.Atoi(strings.TrimSpace(ss))
	return p, s
}

// IsTime reports whether the column is a TIME column.
func IsTime(c Column) bool { return c.Kind == change.Time }
