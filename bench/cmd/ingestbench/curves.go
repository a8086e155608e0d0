package main

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"
)

// The curves part (-only curves, make bench-curves): the cost of ingest as the work grows
// along one dimension at a time — tables in one pipeline, columns, row size, transaction
// size — each point one ingest run measured as the peers are (clientMeasurement); see
// bench/README.md (section Curves).

// Names of the curves.
const (
	curveTables  = "tables"
	curveColumns = "columns"
	curveRowSize = "rowsize"
	curveTxn     = "txn"
)

// Phases of a curve point.
const (
	phaseSnapshot = "snapshot"
	phaseCatchup  = "catch-up"
)

// curveNames are the curves in the order they run.
var curveNames = []string{curveTables, curveColumns, curveRowSize, curveTxn}

// curvePoint is one run of a curve: the curve's variable at X, a phase, and what the run
// measured.
type curvePoint struct {
	Curve string `json:"curve"`
	X     int    `json:"x"`
	Phase string `json:"phase"`
	// Work is the unit the curve holds constant or grows: cells (columns), payload bytes
	// (row size), rows.
	Work int64 `json:"work"`
	measurement
}

// curveSettings are the sizes of the curves part (flags -curve-*).
type curveSettings struct {
	Curves   []string
	Tables   []int // tables in the pipeline
	Changes  int   // changes of the tables curve's catch-up
	Columns  []int // columns of the table
	Cells    int   // rows × columns of each columns point
	RowBytes []int // payload bytes of a row
	Bytes    int   // payload bytes of each row-size point
	TxnSizes []int // rows per transaction
	TxnRows  int   // changes of each transaction-size point (at least one transaction)
}

// tablesRows are the rows of each small table of the tables curve.
const tablesRows = 10

// curves runs the selected curves, each point a snapshot and a catch-up (the transaction
// curve: a catch-up with each guarantee).
func (s *suite) curves(ctx context.Context) error {
	s.res.Mode = partCurves
	cs := s.cfg.Curve
	s.res.Config["curves"] = map[string]any{"curves": cs.Curves, "tables": cs.Tables, "changes": cs.Changes, "columns": cs.Columns,
		"cells": cs.Cells, "row_bytes": cs.RowBytes, "bytes": cs.Bytes, "txn_sizes": cs.TxnSizes, "txn_rows": cs.TxnRows}
	for _, name := range cs.Curves {
		var err error
		switch name {
		case curveTables:
			err = s.tablesCurve(ctx, cs)
		case curveColumns:
			err = s.columnsCurve(ctx, cs)
		case curveRowSize:
			err = s.rowSizeCurve(ctx, cs)
		case curveTxn:
			err = s.txnCurve(ctx, cs)
		}
		if err != nil {
			return fmt.Errorf("curve %s: %w", name, err)
		}
	}
	return nil
}

// curveRun is one ingest run of a curve point.
type curveRun struct {
	curve, phase string
	x            int
	work         int64
	spec         pipelineSpec
	want         int               // records the run writes
	topicConfig  map[string]string // configs of the topic over the suite's
}

// runCurve runs ingest until caught up on r's pipeline and records the point.
func (s *suite) runCurve(ctx context.Context, r curveRun) error {
	name := fmt.Sprintf("%s=%d %s %s", r.curve, r.x, r.phase, r.spec.Guarantee)
	log.Printf("curve %s", name)
	m, err := s.peerIngest(ctx, r.curve, name, r.spec, r.want, r.topicConfig)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	m.Guarantee = r.spec.Guarantee
	s.res.Curves = append(s.res.Curves, curvePoint{Curve: r.curve, X: r.x, Phase: r.phase, Work: r.work, measurement: m})
	return nil
}

// curveSpec is the pipeline of one curve run: its own name and topic, all the matched
// tables into that topic.
func (s *suite) curveSpec(label, tables, guarantee, startup string) pipelineSpec {
	return pipelineSpec{Name: "c-" + label, Pattern: tables, Topic: s.topic(label), Guarantee: guarantee, Startup: startup}
}

// snapshotAndCatchup runs the two phases of a point on tables (a pattern of the bench
// database): the snapshot of rows records, then the catch-up of the changes that change
// writes (from the position before them).
func (s *suite) snapshotAndCatchup(ctx context.Context, curve string, x int, tables string, rows int, work int64,
	change func(context.Context) (int, error), topicConfig map[string]string, sink string) error {
	label := fmt.Sprintf("%s%d-%s", curve, x, s.runID[len(s.runID)-6:])
	spec := s.curveSpec(label+"-snap", tables, atLeastOnce, "initial")
	spec.Sink = sink
	if err := s.runCurve(ctx, curveRun{curve: curve, phase: phaseSnapshot, x: x, work: work, spec: spec, want: rows, topicConfig: topicConfig}); err != nil {
		return err
	}
	from, err := masterStatus(ctx, s.db)
	if err != nil {
		return err
	}
	start := time.Now()
	changes, err := change(ctx)
	if err != nil {
		return err
	}
	log.Printf("  wrote %s changes in %v", thousands(float64(changes)), time.Since(start).Round(time.Millisecond))
	spec = s.curveSpec(label+"-catch", tables, atLeastOnce, "specific-offset")
	spec.From, spec.Sink = from, sink
	return s.runCurve(ctx, curveRun{curve: curve, phase: phaseCatchup, x: x, work: work, spec: spec, want: changes, topicConfig: topicConfig})
}

// tablesCurve: N small tables of tablesRows rows in one pipeline; the snapshot of them all,
// then Changes one-row updates spread over them in transactions of 10.
func (s *suite) tablesCurve(ctx context.Context, cs curveSettings) error {
	for _, n := range cs.Tables {
		prefix := fmt.Sprintf("tt%d_", n)
		if err := ensureSmallTables(ctx, s, prefix, n); err != nil {
			return err
		}
		change := func(ctx context.Context) (int, error) { return updateSmallTables(ctx, s, prefix, n, cs.Changes) }
		if err := s.snapshotAndCatchup(ctx, curveTables, n, prefix+`\.*`, n*tablesRows, int64(n), change, nil, ""); err != nil {
			return err
		}
		// Thousands of tables make every information_schema query of the server slower, the
		// tests' too (one failed on an on-disk temporary table while 11,000 were there).
		if n >= 1000 {
			if err := dropSmallTables(ctx, s, prefix); err != nil {
				return err
			}
		}
	}
	return nil
}

// columnsCurve: a table of c INT columns and Cells/c rows (the cells are the same at each
// point); the snapshot, then an update of every row in transactions of up to 1,000 rows.
func (s *suite) columnsCurve(ctx context.Context, cs curveSettings) error {
	for _, c := range cs.Columns {
		rows := max(cs.Cells/c, 1)
		table := fmt.Sprintf("wide_%d", c)
		if err := ensureWideTable(ctx, s, table, c, rows); err != nil {
			return err
		}
		change := func(ctx context.Context) (int, error) { return updateRows(ctx, s, table, rows, 1000) }
		if err := s.snapshotAndCatchup(ctx, curveColumns, c, table, rows, int64(rows)*int64(c), change, nil, ""); err != nil {
			return err
		}
	}
	return nil
}

// curveMaxRecord is the largest record of the row-size curve's runs: max.request.size of
// its pipelines and max.message.bytes of its topics.
const curveMaxRecord = 4 << 20

// rowSizeCurve: a table of Bytes/size rows of a size-byte payload each (the bytes are the
// same at each point); the snapshot, then an update of every row's counter (the binlog
// carries the whole row twice) in transactions of up to 10 MB.
func (s *suite) rowSizeCurve(ctx context.Context, cs curveSettings) error {
	topicConfig := map[string]string{"max.message.bytes": fmt.Sprint(curveMaxRecord)}
	sink := fmt.Sprintf("properties.max.request.size: %d", curveMaxRecord)
	for _, size := range cs.RowBytes {
		rows := max(cs.Bytes/size, 1)
		table := fmt.Sprintf("payload_%d", size)
		if err := ensurePayloadTable(ctx, s, table, size, rows); err != nil {
			return err
		}
		perTxn := max(1, min(rows, 10_000_000/size))
		change := func(ctx context.Context) (int, error) { return updateRows(ctx, s, table, rows, perTxn) }
		if err := s.snapshotAndCatchup(ctx, curveRowSize, size, table, rows, int64(rows)*int64(size), change, topicConfig, sink); err != nil {
			return err
		}
	}
	return nil
}

// txnCurve: TxnRows changes (60% inserts, 30% updates, 10% deletes, as the catch-up suite
// writes) in transactions of k rows into a new table, then the catch-up with each
// guarantee from the position before them.
func (s *suite) txnCurve(ctx context.Context, cs curveSettings) error {
	for _, k := range cs.TxnSizes {
		rows := max(k, cs.TxnRows/k*k)
		table := fmt.Sprintf("ctxn_%d", k)
		from, err := freshWorkload(ctx, s.db, table, k, rows)
		if err != nil {
			return err
		}
		for _, g := range s.cfg.Guarantees {
			label := fmt.Sprintf("txn%d-%s-%s", k, strings.TrimSuffix(g, "-once"), s.runID[len(s.runID)-6:])
			spec := s.curveSpec(label, table, g, "specific-offset")
			spec.From = from
			if err := s.runCurve(ctx, curveRun{curve: curveTxn, phase: phaseCatchup, x: k, work: int64(rows), spec: spec, want: rows}); err != nil {
				return err
			}
		}
		if _, err := s.db.ExecContext(ctx, "DROP TABLE "+table); err != nil {
			return fmt.Errorf("drop %s: %w", table, err)
		}
	}
	return nil
}
