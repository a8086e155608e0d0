package snapshot

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/ingestkit/ingest/change"
)

// maxEvenFactor is the most key values per row (MAX-MIN+1 over the row estimate) for which a
// single integer key is split evenly by value; a sparser key is walked. Chunks from an even
// split that hold more rows than expected are cut by the reader (see readLimit), so a wrong
// estimate costs parallelism, never memory.
const maxEvenFactor = 100

// planMethod says how a table was split (for logs and tests).
type planMethod uint8

const (
	planWalk planMethod = iota + 1 // boundaries found with LIMIT 1 OFFSET size-1
	planEven                       // boundaries computed from MIN/MAX and the row estimate
)

// planner splits tables into chunks of about size rows.
type planner struct {
	db   *sql.DB
	size int
}

// plan splits each gap of t into chunks and calls emit for each, in key order. A gap covering
// the whole key space of a single integer key is split evenly when the key is dense enough.
func (p *planner) plan(ctx context.Context, t *table, gaps []span, emit func(span) error) (planMethod, error) {
	method := planWalk
	for _, g := range gaps {
		if g.lo == nil && g.hi == nil {
			even, err := p.planEven(ctx, t, emit)
			if err != nil {
				return 0, err
			}
			if even {
				method = planEven
				continue
			}
		}
		if err := p.walk(ctx, g, emit); err != nil {
			return 0, err
		}
	}
	return method, nil
}

// walk splits g by reading, from each boundary, the key size rows further on.
func (p *planner) walk(ctx context.Context, g span, emit func(span) error) error {
	lo := g.lo
	for {
		next, err := p.nextBoundary(ctx, g, lo)
		if err != nil {
			return err
		}
		if next == nil {
			s, err := newSpan(ctx, g.t, lo, g.hi)
			if err != nil {
				return err
			}
			return emit(s)
		}
		s, err := newSpan(ctx, g.t, lo, next)
		if err != nil {
			return err
		}
		if err := emit(s); err != nil {
			return err
		}
		lo = next
	}
}

// nextBoundary returns the key size rows after lo within g, or nil when fewer rows remain
// (or when that key is g's own upper bound).
func (p *planner) nextBoundary(ctx context.Context, g span, lo Bound) (Bound, error) {
	s, err := newSpan(ctx, g.t, lo, g.hi)
	if err != nil {
		return nil, err
	}
	cond, args, err := s.where()
	if err != nil {
		return nil, err
	}
	q := "SELECT " + keyList(g.t.key) + " FROM " + g.t.name()
	if cond != "" {
		q += " WHERE " + cond
	}
	q += g.t.orderSQL + " LIMIT 1 OFFSET " + strconv.Itoa(p.size-1)
	b, err := queryBound(ctx, p.db, len(g.t.key), q, args...)
	if err != nil {
		return nil, fmt.Errorf("plan %s: %w", s, err)
	}
	if b == nil || g.hi == nil {
		return b, nil
	}
	v, err := g.t.decodeBound(ctx, b)
	if err != nil {
		return nil, fmt.Errorf("plan %s: boundary %s: %w", s, b, err)
	}
	if g.t.key.compare(v, g.hiV) >= 0 {
		return nil, nil
	}
	return b, nil
}

// queryBound runs a query returning at most one row of n key columns, as a Bound.
func queryBound(ctx context.Context, db *sql.DB, n int, q string, args ...any) (Bound, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, rows.Err()
	}
	raw := make([]sql.RawBytes, n)
	dest := make([]any, n)
	for i := range raw {
		dest[i] = &raw[i]
	}
	if err := rows.Scan(dest...); err != nil {
		return nil, err
	}
	b := make(Bound, n)
	for i, r := range raw {
		if r == nil {
			return nil, nil
		}
		b[i] = slices.Clone([]byte(r))
	}
	return b, rows.Close()
}

func keyList(k chunkKey) string {
	s := ""
	for i, kc := range k {
		if i > 0 {
			s += ","
		}
		s += quoteIdent(kc.name)
	}
	return s
}

// planEven splits a table with a single integer key evenly between MIN and MAX, when its row
// estimate says the key is dense enough. It reports whether it did.
func (p *planner) planEven(ctx context.Context, t *table, emit func(span) error) (bool, error) {
	if len(t.key) != 1 || (t.key[0].typ != keySigned && t.key[0].typ != keyUnsigned) {
		return false, nil
	}
	col := quoteIdent(t.key[0].name)
	var lo, hi sql.NullString
	err := p.db.QueryRowContext(ctx, "SELECT MIN("+col+"), MAX("+col+") FROM "+t.name()).Scan(&lo, &hi)
	if err != nil {
		return false, fmt.Errorf("plan %s: min/max of %s: %w", t.id, t.key[0].name, err)
	}
	if !lo.Valid { // empty table: one chunk for every key it may get
		s, err := newSpan(ctx, t, nil, nil)
		if err != nil {
			return false, err
		}
		return true, emit(s)
	}
	ints, err := parseIntRange(t.key[0].typ, lo.String, hi.String)
	if err != nil {
		return false, fmt.Errorf("plan %s: %w", t.id, err)
	}
	step, ok := evenStep(ints.width, t.estimate, p.size)
	if !ok {
		return false, nil
	}
	return true, emitEven(ctx, t, ints, step, emit)
}

// intRange is MIN and MAX of an integer key in uint64 space: signed values are offset so that
// min + width is max with wrapping arithmetic.
type intRange struct {
	min    uint64
	width  uint64 // MAX - MIN
	signed bool
}

func parseIntRange(typ keyType, lo, hi string) (intRange, error) {
	if typ == keySigned {
		a, err1 := strconv.ParseInt(lo, 10, 64)
		b, err2 := strconv.ParseInt(hi, 10, 64)
		if err1 != nil || err2 != nil {
			return intRange{}, fmt.Errorf("min/max %q/%q are not integers", lo, hi)
		}
		return intRange{min: uint64(a), width: uint64(b) - uint64(a), signed: true}, nil
	}
	a, err1 := strconv.ParseUint(lo, 10, 64)
	b, err2 := strconv.ParseUint(hi, 10, 64)
	if err1 != nil || err2 != nil {
		return intRange{}, fmt.Errorf("min/max %q/%q are not integers", lo, hi)
	}
	return intRange{min: a, width: b - a}, nil
}

func (r intRange) text(off uint64) []byte {
	if r.signed {
		return strconv.AppendInt(nil, int64(r.min+off), 10)
	}
	return strconv.AppendUint(nil, r.min+off, 10)
}

// evenStep returns the key width of one chunk, or false when the key is too sparse (or the
// estimate unknown) to split by value.
func evenStep(width uint64, estimate int64, size int) (uint64, bool) {
	if estimate <= 0 || width == math.MaxUint64 {
		return 0, false
	}
	factor := (float64(width) + 1) / float64(estimate)
	if factor > maxEvenFactor {
		return 0, false
	}
	return uint64(math.Ceil(float64(size) * max(factor, 1))), true
}

// emitEven emits (-∞, min+step-1], (min+step-1, min+2step-1], …, (…, +∞).
func emitEven(ctx context.Context, t *table, r intRange, step uint64, emit func(span) error) error {
	var lo Bound
	for off := step - 1; off < r.width; off += step {
		hi := Bound{r.text(off)}
		s, err := newSpan(ctx, t, lo, hi)
		if err != nil {
			return err
		}
		if err := emit(s); err != nil {
			return err
		}
		lo = hi
		if off+step < off { // wrapped
			break
		}
	}
	s, err := newSpan(ctx, t, lo, nil)
	if err != nil {
		return err
	}
	return emit(s)
}

// gaps returns the parts of t's key space that no finished chunk covers, in key order.
func gaps(t *table, done []span) []span {
	slices.SortFunc(done, func(a, b span) int { return compareLower(t, a.loV, b.loV) })
	var out []span
	var lo Bound
	var loV []change.Value // nil: -∞
	for _, d := range done {
		if compareLower(t, d.loV, loV) > 0 {
			out = append(out, span{t: t, lo: lo, hi: d.lo, loV: loV, hiV: d.loV})
		}
		if d.hi == nil {
			return out
		}
		if loV == nil || t.key.compare(d.hiV, loV) > 0 {
			lo, loV = d.hi, d.hiV
		}
	}
	return append(out, span{t: t, lo: lo, loV: loV})
}

// compareLower orders lower bounds, nil being -∞.
func compareLower(t *table, a, b []change.Value) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return t.key.compare(a, b)
}
