package snapshot

import (
	"context"
	"fmt"
	"strings"

	"github.com/ingestkit/ingest/change"
)

// Bound is one end of a chunk's key range: for each chunk key column, the value in the text
// form a SELECT returns. A nil Bound is unbounded.
type Bound [][]byte

// String returns the bound as "(v1,v2)", or "∞" when unbounded.
func (b Bound) String() string {
	if b == nil {
		return "∞"
	}
	parts := make([]string, len(b))
	for i, v := range b {
		parts[i] = fmt.Sprintf("%q", v)
	}
	return "(" + strings.Join(parts, ",") + ")"
}

// Chunk is a key range of one table: the rows whose chunk key k has Lo < k <= Hi, a nil end
// being unbounded. A table's chunks partition its whole key space, so every key, present or
// future, belongs to exactly one chunk.
type Chunk struct {
	Table  change.TableID
	Lo, Hi Bound
}

// String returns "db.table (lo, hi]".
func (c Chunk) String() string {
	lo := c.Lo.String()
	if c.Lo == nil {
		lo = "-∞"
	}
	hi := c.Hi.String()
	if c.Hi == nil {
		hi = "+∞"
	}
	return c.Table.String() + " (" + lo + ", " + hi + "]"
}

// span is a chunk with its bounds decoded, bound to its table.
type span struct {
	t      *table
	lo, hi Bound
	loV    []change.Value // nil when unbounded
	hiV    []change.Value
}

func (s span) chunk() Chunk { return Chunk{Table: s.t.id, Lo: s.lo, Hi: s.hi} }

func (s span) String() string { return s.chunk().String() }

// newSpan decodes the bounds of a range of t.
func newSpan(ctx context.Context, t *table, lo, hi Bound) (span, error) {
	s := span{t: t, lo: lo, hi: hi}
	var err error
	if s.loV, err = t.decodeBound(ctx, lo); err != nil {
		return span{}, fmt.Errorf("%s: lower bound: %w", s, err)
	}
	if s.hiV, err = t.decodeBound(ctx, hi); err != nil {
		return span{}, fmt.Errorf("%s: upper bound: %w", s, err)
	}
	return s, nil
}

// decodeBound converts a bound's texts to an orderable key tuple: values of the key columns'
// decoders, made sortable.
func (t *table) decodeBound(ctx context.Context, b Bound) ([]change.Value, error) {
	if b == nil {
		return nil, nil
	}
	if len(b) != len(t.key) {
		return nil, fmt.Errorf("%d values for a %d-column key", len(b), len(t.key))
	}
	out := make([]change.Value, len(b))
	for i, kc := range t.key {
		v, err := t.desc.Columns[kc.index].FromText(b[i])
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, t.sortable(ctx, out)
}

// contains reports whether the key tuple k lies in the span.
func (s span) contains(k []change.Value) bool {
	return (s.loV == nil || s.t.key.compare(k, s.loV) > 0) && (s.hiV == nil || s.t.key.compare(k, s.hiV) <= 0)
}

// where returns the SQL condition of the span and its parameters; "" when unbounded.
func (s span) where() (string, []any, error) {
	var conds []string
	var args []any
	for _, side := range []struct {
		b     Bound
		above bool
	}{{s.lo, true}, {s.hi, false}} {
		if side.b == nil {
			continue
		}
		vals, err := s.t.key.params(side.b)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %w", s, err)
		}
		cond, a := rangeCond(s.t.key, vals, side.above)
		conds, args = append(conds, cond), append(args, a...)
	}
	return strings.Join(conds, " AND "), args, nil
}

// rangeCond writes "key > vals" (above) or "key <= vals" for a possibly composite key,
// expanded as "(a > ?) OR (a = ? AND b > ?)": MariaDB's range optimizer does not use an
// index for a row constructor comparison "(a,b) > (?,?)" and would scan the whole index.
func rangeCond(k chunkKey, vals []any, above bool) (string, []any) {
	var ors []string
	var args []any
	for i := range k {
		var ands []string
		for j := 0; j < i; j++ {
			ands = append(ands, quoteIdent(k[j].name)+" = "+k[j].param)
			args = append(args, vals[j])
		}
		op := " < "
		switch {
		case above:
			op = " > "
		case i == len(k)-1:
			op = " <= "
		}
		ands = append(ands, quoteIdent(k[i].name)+op+k[i].param)
		args = append(args, vals[i])
		ors = append(ors, strings.Join(ands, " AND "))
	}
	if len(ors) == 1 {
		return ors[0], args
	}
	return "((" + strings.Join(ors, ") OR (") + "))", args
}
