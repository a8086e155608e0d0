package transform

import "strings"

// Type is the static type of an expression, as far as the compiler knows it.
type Type uint8

// The static types. TAny is a column whose values may be of more than one kind (TINYINT(1)
// is BOOLEAN or TINYINT by a source option; spatial types): no type check applies to it.
const (
	TAny Type = iota
	TNull
	TBool
	TInt
	TDecimal
	TFloat
	TString
	TBytes
	TJSON
	TDate
	TDateTime
	TTimestamp
	TTime
)

var typeNames = [...]string{"ANY", "NULL", "BOOLEAN", "BIGINT", "DECIMAL", "DOUBLE", "STRING", "BYTES", "JSON",
	"DATE", "TIMESTAMP", "TIMESTAMP_LTZ", "TIME"}

// String returns the Flink CDC name of the type.
func (t Type) String() string { return typeNames[t] }

// sqlType is the SQLType a computed column of type t reports (informational: plan).
func (t Type) sqlType() string {
	switch t {
	case TBool:
		return "boolean"
	case TInt:
		return "bigint"
	case TDecimal:
		return "decimal"
	case TFloat:
		return "double"
	case TString, TNull, TAny:
		return "varchar"
	case TBytes:
		return "varbinary"
	case TJSON:
		return "json"
	case TDate:
		return "date"
	case TDateTime:
		return "datetime"
	case TTimestamp:
		return "timestamp"
	case TTime:
		return "time"
	}
	return ""
}

func (t Type) numeric() bool { return t == TInt || t == TDecimal || t == TFloat }

func (t Type) temporal() bool { return t >= TDate && t <= TTime }

func (t Type) stringy() bool { return t == TString || t == TJSON }

// columnType maps a MySQL column type (information_schema COLUMN_TYPE) to its static type.
func columnType(sqlType string) Type {
	s := strings.ToLower(strings.TrimSpace(sqlType))
	base := s
	if i := strings.IndexAny(base, "( "); i >= 0 {
		base = base[:i]
	}
	switch base {
	case "tinyint":
		if strings.HasPrefix(s, "tinyint(1)") {
			return TAny // BOOLEAN or TINYINT, by source option
		}
		return TInt
	case "smallint", "mediumint", "int", "integer", "bigint", "year":
		return TInt
	case "decimal", "numeric", "dec", "fixed":
		return TDecimal
	case "float", "double", "real":
		return TFloat
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set":
		return TString
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		return TBytes
	case "bit":
		if s == "bit(1)" || s == "bit" {
			return TBool
		}
		return TBytes
	case "json":
		return TJSON
	case "date":
		return TDate
	case "datetime":
		return TDateTime
	case "timestamp":
		return TTimestamp
	case "time":
		return TTime
	case "boolean", "bool":
		return TBool
	}
	return TAny
}
