package snapshot

import (
	"bytes"
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ingestkit/ingest/change"
)

// keyType is how a chunk key column is ordered in Go and sent to the server as a parameter.
type keyType uint8

const (
	keySigned   keyType = iota + 1 // signed integers, YEAR: int64 parameter
	keyUnsigned                    // unsigned integers: uint64 parameter
	keyDecimal                     // DECIMAL: text parameter cast to the column's DECIMAL(p,s)
	keyTemporal                    // DATE, DATETIME, TIMESTAMP, TIME: text parameter
	keyBytes                       // BINARY, VARBINARY: binary parameter, byte order
	keyText                        // CHAR, VARCHAR in a collation the snapshot can reproduce: binary parameter read in the column's character set and collation
	keyUUID                        // MariaDB UUID: text parameter cast to UUID, ordered as the server stores it (fixedbin.go)
	keyInet                        // MariaDB INET4, INET6: text parameter cast to the type, ordered by its bytes
)

// keyColumn is one column of a table's chunk key.
type keyColumn struct {
	name    string
	index   int // in the table's columns
	typ     keyType
	sqlType string // COLUMN_TYPE
	param   string // the placeholder expression: "?", "CAST(? AS DECIMAL(p,s))" or "CONVERT(? USING cs) COLLATE c"
	// collation is the name of a keyText column's collation, and coll its order, set by
	// [loadTable]. When only the server can weigh its texts (coll.server), key tuples hold
	// weight strings instead ([table.sortable]).
	collation string
	coll      *collation
}

// columnFacts is what information_schema says of a key column.
type columnFacts struct {
	Name, DataType, ColumnType, Collation string
	Nullable                              bool
}

var decimalType = regexp.MustCompile(`^(?:decimal|numeric)\((\d+)(?:,(\d+))?\)`)

// newKeyColumn classifies a chunk key column, or says why its order cannot be used.
func newKeyColumn(f columnFacts, index int) (keyColumn, error) {
	kc := keyColumn{name: f.Name, index: index, sqlType: f.ColumnType, param: "?"}
	if f.Nullable {
		return kc, fmt.Errorf("chunk key column %s is nullable; rows with NULL there cannot be chunked (declare it NOT NULL or choose another key column)", f.Name)
	}
	switch f.DataType {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint":
		kc.typ = keySigned
		if strings.Contains(f.ColumnType, "unsigned") {
			kc.typ = keyUnsigned
		}
	case "year":
		kc.typ = keySigned
	case "decimal", "numeric":
		m := decimalType.FindStringSubmatch(strings.ToLower(f.ColumnType))
		if m == nil {
			return kc, fmt.Errorf("chunk key column %s: cannot read the precision of %s", f.Name, f.ColumnType)
		}
		scale := cmp.Or(m[2], "0")
		kc.typ, kc.param = keyDecimal, "CAST(? AS DECIMAL("+m[1]+","+scale+"))"
	case "date", "datetime", "timestamp", "time":
		kc.typ = keyTemporal
	case "binary", "varbinary":
		kc.typ = keyBytes
	case "uuid", "inet4", "inet6":
		kc.typ, kc.param = keyInet, "CAST(? AS "+strings.ToUpper(f.DataType)+")"
		if f.DataType == "uuid" {
			kc.typ = keyUUID
		}
	case "char", "varchar":
		if !supportedCollation(f.Collation) {
			return kc, fmt.Errorf("chunk key column %s (%s collate %s) is ordered by a collation the snapshot cannot reproduce; "+
				"use a key column that is an integer, DECIMAL, temporal, BINARY/VARBINARY, or text in a Unicode character set or latin1 (or in a *_general_ci collation), "+
				"or name one with scan.incremental.snapshot.chunk.key-column", f.Name, f.ColumnType, f.Collation)
		}
		// A bound is the server's text in the column's own character set (the SELECTs
		// ask for results unconverted): sent as bytes, read back in that set.
		charset, _, _ := strings.Cut(f.Collation, "_")
		kc.typ, kc.collation = keyText, f.Collation
		kc.param = "CONVERT(? USING " + charset + ") COLLATE " + f.Collation
	default:
		return kc, fmt.Errorf("chunk key column %s has type %s, which cannot be used as a chunk key; use an integer, DECIMAL, temporal, BINARY/VARBINARY, CHAR/VARCHAR, UUID, INET4 or INET6 column", f.Name, f.ColumnType)
	}
	return kc, nil
}

// param converts a bound's server text for this column into the query parameter.
func (kc *keyColumn) paramValue(text []byte) (any, error) {
	switch kc.typ {
	case keySigned:
		return strconv.ParseInt(string(text), 10, 64)
	case keyUnsigned:
		return strconv.ParseUint(string(text), 10, 64)
	case keyBytes, keyText:
		return text, nil
	}
	return string(text), nil
}

// serverWeighed reports whether only the server can weigh this column's texts: its key
// tuples hold weight strings ([table.sortable]).
func (kc *keyColumn) serverWeighed() bool { return kc.coll != nil && kc.coll.server }

// compare orders two values of this column as the server does.
func (kc *keyColumn) compare(a, b change.Value) int {
	if a.Kind == change.Null || b.Kind == change.Null {
		return cmp.Compare(boolInt(a.Kind != change.Null), boolInt(b.Kind != change.Null))
	}
	switch a.Kind {
	case change.Int, change.Timestamp, change.Time:
		return cmp.Compare(int64(a.Num), int64(b.Num))
	case change.Uint, change.Bool, change.Date, change.DateTime:
		return cmp.Compare(a.Num, b.Num)
	case change.Decimal:
		return compareDecimal(a.Bytes, b.Bytes)
	case change.String:
		switch {
		case kc.typ == keyUUID || kc.typ == keyInet:
			return compareFixedBin(kc.typ, a.Bytes, b.Bytes)
		case kc.serverWeighed():
			return kc.coll.compareWeights(a.Bytes, b.Bytes) // tuples made by table.sortable
		case kc.coll != nil:
			return kc.coll.compare(a.Bytes, b.Bytes)
		}
	}
	return bytes.Compare(a.Bytes, b.Bytes)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// compareDecimal orders two exact decimal texts ("-12.50", "3") numerically.
func compareDecimal(a, b []byte) int {
	negA, negB := len(a) > 0 && a[0] == '-', len(b) > 0 && b[0] == '-'
	a, b = bytes.TrimLeft(a, "+-"), bytes.TrimLeft(b, "+-")
	if isZeroDecimal(a) && isZeroDecimal(b) {
		return 0
	}
	if negA != negB {
		if negA {
			return -1
		}
		return 1
	}
	c := compareMagnitude(a, b)
	if negA {
		return -c
	}
	return c
}

func compareMagnitude(a, b []byte) int {
	ia, fa, _ := bytes.Cut(a, []byte("."))
	ib, fb, _ := bytes.Cut(b, []byte("."))
	ia, ib = bytes.TrimLeft(ia, "0"), bytes.TrimLeft(ib, "0")
	if c := cmp.Compare(len(ia), len(ib)); c != 0 {
		return c
	}
	if c := bytes.Compare(ia, ib); c != 0 {
		return c
	}
	fa, fb = bytes.TrimRight(fa, "0"), bytes.TrimRight(fb, "0")
	return bytes.Compare(fa, fb)
}

func isZeroDecimal(b []byte) bool {
	return len(bytes.Trim(b, "0.")) == 0
}

// chunkKey is the ordered chunk key of a table.
type chunkKey []keyColumn

// values returns the chunk key's values of a row.
func (k chunkKey) values(row change.Row) []change.Value {
	out := make([]change.Value, len(k))
	for i, kc := range k {
		if kc.index < len(row) {
			out[i] = row[kc.index]
		}
	}
	return out
}

// compare orders two key tuples lexicographically.
func (k chunkKey) compare(a, b []change.Value) int {
	for i := range k {
		if c := k[i].compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// params converts a bound's texts into query parameters.
func (k chunkKey) params(b Bound) ([]any, error) {
	out := make([]any, len(k))
	for i := range k {
		v, err := k[i].paramValue(b[i])
		if err != nil {
			return nil, fmt.Errorf("key column %s: bound %q: %w", k[i].name, b[i], err)
		}
		out[i] = v
	}
	return out, nil
}

// recordKey encodes the values of the record key columns of row into a map key.
func recordKey(schema *change.Schema, row change.Row) string {
	var b []byte
	for _, i := range schema.Key {
		v := row[i]
		b = append(b, byte(v.Kind))
		b = strconv.AppendUint(b, v.Num, 36)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(len(v.Bytes)), 10)
		b = append(b, ':')
		b = append(b, v.Bytes...)
	}
	return string(b)
}
