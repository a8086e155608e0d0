//go:build integration

package cdc

import (
	"context"
	"strings"
	"testing"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/internal/testenv"
)

func TestPreflight(t *testing.T) {
	testenv.RunMatrix(t, func(t *testing.T, srv testenv.Server) {
		name, db := srv.Database(t)
		ctx := context.Background()
		cfg := testConfig(srv, name)
		if problems := Preflight(ctx, cfg); len(problems) != 0 {
			t.Fatalf("CDC user on the test server: %v", problems)
		}

		cfg.Position = binlogpos.Position{File: "mariadb-bin.000000", Offset: 4}
		problems := Preflight(ctx, cfg)
		if len(problems) != 1 || problems[0].Check != "position" || !strings.Contains(problems[0].Message, "re-snapshot") {
			t.Fatalf("purged position: %v", problems)
		}

		user := "pf_" + name[len(name)-6:]
		testenv.Exec(t, db, "CREATE USER '"+user+"'@'127.0.0.1' IDENTIFIED BY 'pw'", "GRANT SELECT ON *.* TO '"+user+"'@'127.0.0.1'")
		t.Cleanup(func() { _, _ = db.Exec("DROP USER '" + user + "'@'127.0.0.1'") })
		cfg = testConfig(srv, name)
		cfg.User, cfg.Password = user, "pw"
		problems = Preflight(ctx, cfg)
		if len(problems) != 1 || !strings.Contains(problems[0].Message, "GRANT REPLICATION SLAVE, BINLOG MONITOR ON *.*") {
			t.Fatalf("user with SELECT only: %v", problems)
		}
		t.Log(problems[0])

		cfg.Password = "wrong"
		if problems = Preflight(ctx, cfg); len(problems) != 1 || problems[0].Check != "connect" {
			t.Fatalf("wrong password: %v", problems)
		}
	})
}
