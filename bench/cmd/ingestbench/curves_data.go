package main

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"strings"
	"time"
)

// The tables of the curves part, each loaded once and reused while its marker in
// bench_marker says it is complete (as ensureSnapTable does for the bench table).

// curveSchemaVersion changes whenever a curve table's shape or content changes.
const curveSchemaVersion = 1

// loaded reports whether the marker of name says rows were loaded with this version.
func loaded(ctx context.Context, db *sql.DB, name string, rows int) (bool, error) {
	var n int64
	var version int
	err := db.QueryRowContext(ctx, "SELECT rows_loaded, schema_version FROM bench_marker WHERE tbl = ?", name).Scan(&n, &version)
	if err == sql.ErrNoRows {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the marker of %s: %w", name, err)
	}
	return n == int64(rows) && version == curveSchemaVersion, nil
}

// markLoaded writes the marker of name.
func markLoaded(ctx context.Context, db *sql.DB, name string, rows int) error {
	_, err := db.ExecContext(ctx, "REPLACE INTO bench_marker VALUES (?, ?, ?, NOW())", name, rows, curveSchemaVersion)
	if err != nil {
		return fmt.Errorf("write the marker of %s: %w", name, err)
	}
	return nil
}

// execBatches runs the statements in batches of per, each batch one round trip.
func execBatches(ctx context.Context, db *sql.DB, what string, n, per int, stmt func(i int) string) error {
	var sb strings.Builder
	for i := range n {
		sb.WriteString(stmt(i))
		sb.WriteString(";\n")
		if (i+1)%per == 0 || i == n-1 {
			if _, err := db.ExecContext(ctx, sb.String()); err != nil {
				return fmt.Errorf("%s, statement %d: %w", what, i, err)
			}
			sb.Reset()
		}
	}
	return nil
}

// ensureSmallTables makes sure the n tables prefix0 … prefix<n-1> exist with tablesRows
// rows each.
func ensureSmallTables(ctx context.Context, s *suite, prefix string, n int) error {
	marker := "tables:" + prefix
	if ok, err := loaded(ctx, s.db, marker, n); err != nil || ok {
		if ok {
			log.Printf("reusing %d tables %s*", n, prefix)
		}
		return err
	}
	log.Printf("creating %d tables %s* of %d rows", n, prefix, tablesRows)
	start := time.Now()
	if err := dropTablesLike(ctx, s.db, prefix); err != nil {
		return err
	}
	err := execBatches(ctx, s.db, "create "+prefix+"*", n, 50, func(i int) string {
		return fmt.Sprintf("CREATE TABLE %[1]s%[2]d (id INT NOT NULL PRIMARY KEY, v INT NOT NULL, s VARCHAR(32) NOT NULL); "+
			"INSERT INTO %[1]s%[2]d SELECT seq, 0, MD5(seq) FROM seq_1_to_%[3]d", prefix, i, tablesRows)
	})
	if err != nil {
		return err
	}
	log.Printf("  created in %v", time.Since(start).Round(time.Millisecond))
	return markLoaded(ctx, s.db, marker, n)
}

// dropSmallTables drops the tables of the tables curve with prefix, and their marker.
func dropSmallTables(ctx context.Context, s *suite, prefix string) error {
	log.Printf("dropping the tables %s*", prefix)
	if err := dropTablesLike(ctx, s.db, prefix); err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, "DELETE FROM bench_marker WHERE tbl = ?", "tables:"+prefix); err != nil {
		return fmt.Errorf("delete the marker of %s*: %w", prefix, err)
	}
	return nil
}

// dropTablesLike drops the bench database's tables whose names start with prefix.
func dropTablesLike(ctx context.Context, db *sql.DB, prefix string) error {
	names, err := tablesLike(ctx, db, prefix)
	if err != nil {
		return err
	}
	return execBatches(ctx, db, "drop "+prefix+"*", len(names), 100, func(i int) string { return "DROP TABLE " + names[i] })
}

// updateSmallTables writes changes one-row updates over the n tables (statement i updates
// table i mod n), in transactions of 10, and returns the changes.
func updateSmallTables(ctx context.Context, s *suite, prefix string, n, changes int) (int, error) {
	const perTxn = 10
	txns := (changes + perTxn - 1) / perTxn
	err := execBatches(ctx, s.db, "update "+prefix+"*", txns, 50, func(t int) string {
		var sb strings.Builder
		sb.WriteString("BEGIN")
		for j := range perTxn {
			i := t*perTxn + j
			fmt.Fprintf(&sb, "; UPDATE %s%d SET v = v + 1 WHERE id = %d", prefix, i%n, 1+(i/n)%tablesRows)
		}
		sb.WriteString("; COMMIT")
		return sb.String()
	})
	return txns * perTxn, err
}

// ensureWideTable makes sure table has rows rows of c columns: id, a counter v and c-2
// INT columns.
func ensureWideTable(ctx context.Context, s *suite, table string, c, rows int) error {
	if ok, err := loaded(ctx, s.db, table, rows); err != nil || ok {
		return err
	}
	log.Printf("loading %s: %d rows of %d columns", table, rows, c)
	var cols, sel strings.Builder
	cols.WriteString("id BIGINT NOT NULL PRIMARY KEY, v INT NOT NULL")
	sel.WriteString("seq, 0")
	for k := 2; k < c; k++ {
		fmt.Fprintf(&cols, ", c%d INT NOT NULL", k)
		fmt.Fprintf(&sel, ", (seq * %d) %% 1000003", k)
	}
	q := fmt.Sprintf("DROP TABLE IF EXISTS %[1]s; CREATE TABLE %[1]s (%[2]s)", table, cols.String())
	if _, err := s.db.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("create %s: %w", table, err)
	}
	chunk := max(1, 200_000/c) // rows per INSERT … SELECT
	for lo := 1; lo <= rows; lo += chunk {
		q := fmt.Sprintf("INSERT INTO %s SELECT %s FROM seq_%d_to_%d", table, sel.String(), lo, min(lo+chunk-1, rows))
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("load %s rows %d..: %w", table, lo, err)
		}
	}
	return markLoaded(ctx, s.db, table, rows)
}

// ensurePayloadTable makes sure table has rows rows of a size-byte payload each (hex
// digits from MD5s, which lz4 compresses about as well as text), a counter v and an id.
func ensurePayloadTable(ctx context.Context, s *suite, table string, size, rows int) error {
	if ok, err := loaded(ctx, s.db, table, rows); err != nil || ok {
		return err
	}
	log.Printf("loading %s: %d rows of %d payload bytes", table, rows, size)
	conn, err := s.db.Conn(ctx) // @src lives in one session
	if err != nil {
		return err
	}
	defer conn.Close()
	const window = 1_000_000 // payloads start anywhere in the first window bytes of @src
	srcBytes := window + size + 32
	q := fmt.Sprintf(`DROP TABLE IF EXISTS %[1]s;
CREATE TABLE %[1]s (id BIGINT NOT NULL PRIMARY KEY, v INT NOT NULL, payload LONGTEXT NOT NULL);
SET SESSION group_concat_max_len = %[2]d;
SET @src = (SELECT GROUP_CONCAT(MD5(seq) SEPARATOR '') FROM seq_1_to_%[3]d)`, table, srcBytes+64, srcBytes/32+1)
	if _, err := conn.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("create %s: %w", table, err)
	}
	chunk := max(1, 10_000_000/size) // rows per INSERT … SELECT: about 10 MB
	for lo := 1; lo <= rows; lo += chunk {
		q := fmt.Sprintf("INSERT INTO %s SELECT seq, 0, SUBSTRING(@src, 1 + (seq * 7919) %% %d, %d) FROM seq_%d_to_%d",
			table, window, size, lo, min(lo+chunk-1, rows))
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("load %s rows %d..: %w", table, lo, err)
		}
	}
	return markLoaded(ctx, s.db, table, rows)
}

// updateRows increments the counter of every row of table (ids 1 to rows) in
// transactions of perTxn rows, and returns the changes.
func updateRows(ctx context.Context, s *suite, table string, rows, perTxn int) (int, error) {
	txns := (rows + perTxn - 1) / perTxn
	err := execBatches(ctx, s.db, "update "+table, txns, 50, func(t int) string {
		lo := 1 + t*perTxn
		return fmt.Sprintf("UPDATE %s SET v = v + 1 WHERE id BETWEEN %d AND %d", table, lo, min(lo+perTxn-1, rows))
	})
	return rows, err
}
