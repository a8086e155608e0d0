package schema

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// geometryJSON renders a geometry value in the server's internal format (a 4-byte
// little-endian SRID, then WKB), as the binlog and a SELECT both return it, into
// {"type":…,"coordinates":…,"srid":n}. A GeometryCollection has "geometries" in place of
// "coordinates", as in GeoJSON. Numbers are written as for DOUBLE.
func geometryJSON(v []byte) ([]byte, error) {
	if len(v) < 4 {
		return nil, errors.New("geometry: shorter than its srid")
	}
	srid := binary.LittleEndian.Uint32(v)
	r := wkbReader{data: v[4:]}
	out, err := r.geometry(nil)
	if err != nil {
		return nil, fmt.Errorf("geometry: %w", err)
	}
	out = append(out[:len(out)-1], `,"srid":`...) // reopen the object to add the srid
	out = strconv.AppendUint(out, uint64(srid), 10)
	return append(out, '}'), nil
}

var wkbTypeNames = [...]string{1: "Point", 2: "LineString", 3: "Polygon", 4: "MultiPoint",
	5: "MultiLineString", 6: "MultiPolygon", 7: "GeometryCollection"}

type wkbReader struct {
	data  []byte
	order binary.ByteOrder
	depth int
}

func (r *wkbReader) need(n int) error {
	if len(r.data) < n {
		return errors.New("truncated wkb")
	}
	return nil
}

func (r *wkbReader) uint32() (uint32, error) {
	if err := r.need(4); err != nil {
		return 0, err
	}
	u := r.order.Uint32(r.data)
	r.data = r.data[4:]
	return u, nil
}

// header reads a WKB byte order and geometry type.
func (r *wkbReader) header() (uint32, error) {
	if err := r.need(5); err != nil {
		return 0, err
	}
	switch r.data[0] {
	case 0:
		r.order = binary.BigEndian
	case 1:
		r.order = binary.LittleEndian
	default:
		return 0, fmt.Errorf("bad wkb byte order %d", r.data[0])
	}
	r.data = r.data[1:]
	t, _ := r.uint32()
	if t == 0 || int(t) >= len(wkbTypeNames) {
		return 0, fmt.Errorf("unsupported wkb type %d", t)
	}
	return t, nil
}

// geometry appends one geometry object {"type":…,"coordinates":…}.
func (r *wkbReader) geometry(out []byte) ([]byte, error) {
	if r.depth++; r.depth > 32 {
		return nil, errors.New("wkb nested too deep")
	}
	defer func() { r.depth-- }()
	t, err := r.header()
	if err != nil {
		return nil, err
	}
	out = append(out, `{"type":"`...)
	out = append(out, wkbTypeNames[t]...)
	if t == 7 {
		out = append(out, `","geometries":`...)
		out, err = r.list(out, func(out []byte) ([]byte, error) { return r.geometry(out) })
	} else {
		out = append(out, `","coordinates":`...)
		out, err = r.coordinates(out, t)
	}
	if err != nil {
		return nil, err
	}
	return append(out, '}'), nil
}

// coordinates appends the coordinate array of a non-collection geometry of type t.
func (r *wkbReader) coordinates(out []byte, t uint32) ([]byte, error) {
	switch t {
	case 1:
		return r.point(out)
	case 2:
		return r.list(out, r.point)
	case 3:
		return r.list(out, func(out []byte) ([]byte, error) { return r.list(out, r.point) })
	}
	// Multi*: each member is a full WKB geometry of the matching simple type.
	return r.list(out, func(out []byte) ([]byte, error) {
		mt, err := r.header()
		if err != nil {
			return nil, err
		}
		if mt != t-3 {
			return nil, fmt.Errorf("%s holds a %s", wkbTypeNames[t], wkbTypeNames[mt])
		}
		return r.coordinates(out, mt)
	})
}

// list appends a counted array whose items elem appends.
func (r *wkbReader) list(out []byte, elem func([]byte) ([]byte, error)) ([]byte, error) {
	n, err := r.uint32()
	if err != nil {
		return nil, err
	}
	if int64(n) > int64(len(r.data)) { // every item takes at least one byte
		return nil, errors.New("truncated wkb")
	}
	out = append(out, '[')
	for i := uint32(0); i < n; i++ {
		if i > 0 {
			out = append(out, ',')
		}
		order := r.order
		if out, err = elem(out); err != nil {
			return nil, err
		}
		r.order = order
	}
	return append(out, ']'), nil
}

func (r *wkbReader) point(out []byte) ([]byte, error) {
	if err := r.need(16); err != nil {
		return nil, err
	}
	x := math.Float64frombits(r.order.Uint64(r.data))
	y := math.Float64frombits(r.order.Uint64(r.data[8:]))
	r.data = r.data[16:]
	out = append(out, '[')
	out = appendESNumber(out, x)
	out = append(out, ',')
	out = appendESNumber(out, y)
	return append(out, ']'), nil
}
