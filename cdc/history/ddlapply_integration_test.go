//go:build integration

package history

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/cdc/schema"
	"github.com/ingestkit/ingest/change"
	"github.com/ingestkit/ingest/internal/testenv"
)

// TestHistoryMatchesInformationSchema applies DDL to the history's shapes and compares each
// step with what the server's information_schema says after running it.
func TestHistoryMatchesInformationSchema(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		loader := SQLInfo{DB: db, MariaDB: true}
		env := Env{MariaDB: true, IntWidths: true, dbCharset: func(d string) string {
			cs, err := loader.dbCharset(context.Background(), d)
			if err != nil {
				t.Fatal(err)
			}
			return cs
		}}
		shapes := memShapes{}
		steps := []string{
			`CREATE TABLE t (a SERIAL, b BOOL, c TEXT(100), d LONG VARCHAR, e NATIONAL VARCHAR(10), f REAL, g FLOAT(30),
		h DEC(5,2), i NUMERIC, j INTEGER, k INT1, l MIDDLEINT, m VARCHAR(10) BINARY, n VARCHAR(5) CHARACTER SET binary,
		o TEXT COLLATE latin1_bin, p BOOLEAN, q FLOAT(5), r DOUBLE(10,2) UNSIGNED, s TINYTEXT CHARSET utf8, t LONG,
		u BIT(7), v ENUM('x','y''z') CHARACTER SET latin1, w YEAR(4), y LONGBLOB, z MEDIUMINT UNSIGNED ZEROFILL,
		aa DATETIME(6), ab TIMESTAMP NULL, ad BINARY, ae VARBINARY(3), af CHAR(3) CHARACTER SET ascii, ag INT(3),
		ah DECIMAL(7), ai JSON, aj GEOMETRY, ak POINT, al UUID, am INET6, an TINYINT UNSIGNED, ao SMALLINT, ap BIGINT,
		aq TIME(3), ar DATE, as1 SET('a','b'), at1 FLOAT(7,3), au DECIMAL(10,2) UNSIGNED, av TINYBLOB, aw MEDIUMBLOB,
		ax BLOB, ay CHAR(5), az VARCHAR(7) CHARACTER SET gbk, ba BIT, bb ENUM('é'), bd TEXT(1000) CHARACTER SET latin1,
		be VARCHAR(3) CHARACTER SET utf8mb4 COLLATE utf8mb4_uca1400_ai_ci, bf VARCHAR(4) CHARACTER SET cp1251,
		bg CHAR(2) CHARACTER SET ucs2, bh LONGTEXT, CONSTRAINT bh_json CHECK (json_valid(bh)))`,
			"ALTER TABLE t ADD COLUMN c1 DATE AFTER a, ADD c2 INT FIRST, DROP COLUMN d, RENAME COLUMN e TO e2",
			"ALTER TABLE t MODIFY b INT, CHANGE f f2 DECIMAL(9,3) AFTER a, MODIFY ai LONGTEXT",
			"ALTER TABLE t ADD COLUMN IF NOT EXISTS b TINYINT, DROP COLUMN IF EXISTS nope, ADD COLUMN IF NOT EXISTS bi INT",
			"ALTER TABLE t RENAME COLUMN bh TO bh2",
			"ALTER TABLE t MODIFY bh2 MEDIUMTEXT, ADD COLUMN nv NCHAR(3) AFTER c, ADD nn NATIONAL CHARACTER VARYING(4), ADD nc NCHAR",
			"ALTER TABLE t DROP CONSTRAINT bh_json",
			"ALTER TABLE t DEFAULT CHARSET latin1, ADD COLUMN bj VARCHAR(3), ADD bk ENUM('a','bb')",
			"ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4",
			"ALTER TABLE t ADD PRIMARY KEY (c2, a)",
			"ALTER TABLE t DROP PRIMARY KEY, ADD CONSTRAINT PRIMARY KEY (a)",
			"ALTER TABLE t ADD COLUMN cm1 INT NOT NULL COMMENT 'it''s a “comment”', MODIFY bj VARCHAR(3) NOT NULL DEFAULT 'x' COMMENT 'bj', MODIFY c1 DATE NULL",
			"CREATE OR REPLACE TABLE t (id INT UNSIGNED PRIMARY KEY, g POINT, j JSON, x VARCHAR(3) CHARACTER SET koi8r) DEFAULT CHARSET=cp1250",
			"ALTER ONLINE TABLE t ADD COLUMN y CHAR(2), MODIFY j JSON CHECK (json_valid(j))",
			"ALTER TABLE t CONVERT TO CHARACTER SET ucs2",
		}
		id := change.TableID{DB: name, Table: "t"}
		for i, q := range steps {
			testenv.Exec(t, db, q)
			res := applyDDL(name, q, shapes, env)
			if len(res.reread) > 0 || res.all {
				t.Fatalf("step %d: read back %v: %v", i, res.reread, res.problem)
			}
			for _, u := range res.updates {
				shapes[u.id] = u.info
			}
			want, err := loader.loadTable(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			got := shapes[id]
			if diff := diffShapes(got, want); diff != "" {
				t.Errorf("step %d (%.60s…): history and information_schema differ:\n%s", i, q, diff)
			}
		}
	})
}

func diffShapes(got, want *schema.TableShape) string {
	var b strings.Builder
	if len(got.Columns) != len(want.Columns) {
		fmt.Fprintf(&b, "  %d columns, want %d\n", len(got.Columns), len(want.Columns))
	}
	for i := range min(len(got.Columns), len(want.Columns)) {
		g, w := got.Columns[i], want.Columns[i]
		if g != w {
			fmt.Fprintf(&b, "  column %d:\n    got  %+v\n    want %+v\n", i, g, w)
		}
	}
	if strings.Join(got.PrimaryKey, ",") != strings.Join(want.PrimaryKey, ",") {
		fmt.Fprintf(&b, "  key %v, want %v\n", got.PrimaryKey, want.PrimaryKey)
	}
	if got.Charset != want.Charset {
		fmt.Fprintf(&b, "  charset %q, want %q\n", got.Charset, want.Charset)
	}
	return b.String()
}
