package snapshot

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/ingestkit/ingest/change"
)

// testColumn decodes the integer columns of the tables the unit tests build by hand (the
// integration tests use package cdc's decoders).
type testColumn struct {
	kind change.Kind
}

func (c testColumn) FromText(b []byte) (change.Value, error) {
	if b == nil {
		return change.Value{}, nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	return change.IntValue(n), err
}

func (c testColumn) FromOwnedText(b []byte) (change.Value, error) { return c.FromText(b) }

func (c testColumn) BinaryForm() bool { return true }

// FromBinary takes a little-endian BIGINT.
func (c testColumn) FromBinary(b []byte) (change.Value, error) {
	if len(b) != 8 {
		return change.Value{}, fmt.Errorf("test column: binary value of %d bytes", len(b))
	}
	return change.IntValue(int64(binary.LittleEndian.Uint64(b))), nil
}

func (c testColumn) BinaryText(b []byte) ([]byte, error) {
	v, err := c.FromBinary(b)
	return strconv.AppendInt(nil, v.Int(), 10), err
}

func (c testColumn) FromBinlog(v any) (change.Value, error) {
	if n, ok := v.(int64); ok {
		return change.IntValue(n), nil
	}
	return change.Value{}, fmt.Errorf("test column: unexpected %T", v)
}
