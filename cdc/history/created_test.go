package history

import (
	"slices"
	"testing"

	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/change"
)

func TestCreatedTables(t *testing.T) {
	view := memShapes{
		{DB: "d", Table: "dropped"}: nil,                  // known not to exist
		{DB: "d", Table: "there"}:   &schema.TableShape{}, // exists
	}
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"CREATE TABLE t (id INT PRIMARY KEY)", []string{"d.t"}},
		{"create table `o`.`t` (id int primary key)", []string{"o.t"}},
		{"/* by a tool */ CREATE TABLE t (id INT PRIMARY KEY)", []string{"d.t"}},
		{"CREATE TABLE t LIKE there", []string{"d.t"}},
		{"CREATE TABLE t (id INT PRIMARY KEY) SELECT 1 AS id", []string{"d.t"}},
		{"CREATE OR REPLACE TABLE t (id INT PRIMARY KEY)", []string{"d.t"}},
		// IF NOT EXISTS creates only what the history knows did not exist: an unknown table
		// may have been there before the start, with rows the binlog read does not hold.
		{"CREATE TABLE IF NOT EXISTS t (id INT PRIMARY KEY)", nil},
		{"CREATE TABLE IF NOT EXISTS there (id INT PRIMARY KEY)", nil},
		{"CREATE TABLE IF NOT EXISTS dropped (id INT PRIMARY KEY)", []string{"d.dropped"}},
		{"CREATE TEMPORARY TABLE t (id INT PRIMARY KEY)", nil},
		{"ALTER TABLE t ADD COLUMN v INT", nil},
		{"RENAME TABLE x TO t", nil},
		{"CREATE DATABASE t", nil},
		{"CREATE TABLE (broken", nil},
	} {
		var got []string
		for _, id := range CreatedTables("d", c.query, view) {
			got = append(got, id.String())
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("createdTables(%q) = %v, want %v", c.query, got, c.want)
		}
	}
}

func TestRenamedTables(t *testing.T) {
	view := memShapes{{DB: "d", Table: "live"}: &schema.TableShape{}, {DB: "d", Table: "gone"}: nil}
	tests := []struct {
		query string
		want  []change.TableID
	}{
		{"RENAME TABLE s TO t", []change.TableID{{DB: "d", Table: "t"}}},
		{"RENAME TABLE live TO live_old, live_new TO live", []change.TableID{{DB: "d", Table: "live_old"}}},                      // a swap
		{"/* tool */ RENAME TABLE d.t TO d.old, e.new TO d.t", []change.TableID{{DB: "d", Table: "old"}, {DB: "d", Table: "t"}}}, // t unknown
		{"ALTER TABLE s RENAME TO e.t", []change.TableID{{DB: "e", Table: "t"}}},
		{"ALTER TABLE s RENAME AS t, ADD COLUMN c INT", []change.TableID{{DB: "d", Table: "t"}}},
		{"ALTER TABLE s ADD COLUMN c INT", nil},
		{"ALTER TABLE s RENAME COLUMN a TO b", nil},
		{"CREATE TABLE t (a INT)", nil},
		{"RENAME USER a TO b", nil},
		{"RENAME TABLE back TO gone", []change.TableID{{DB: "d", Table: "gone"}}}, // renamed in again after it left
	}
	for _, tc := range tests {
		if got := RenamedTables("d", tc.query, view); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.query, got, tc.want)
		}
	}
}
