// Package binlogpos holds positions in a MySQL or MariaDB binlog: [Position], a point
// between two source transactions (file/offset, MariaDB GTIDs kept as the last GTID per
// domain, MySQL GTID sets), with a text form that round-trips through [ParsePosition], and
// the GTID arithmetic the stream and the checks need (gtidset.go).
//
// It stands on the first floor of the source: it imports nothing of ingest, and every
// package of cdc above it may import it (see cdc/doc.go for the floors).
package binlogpos
