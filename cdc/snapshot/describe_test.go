package snapshot

import (
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

func (c testColumn) FromBinlog(v any) (change.Value, error) {
	if n, ok := v.(int64); ok {
		return change.IntValue(n), nil
	}
	return change.Value{}, fmt.Errorf("test column: unexpected %T", v)
}
