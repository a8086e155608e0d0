package cdc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/ingestkit/ingest/cdc/binlogpos"
	"github.com/ingestkit/ingest/cdc/history"
)

// Severity says whether a Problem stops the pipeline.
type Severity uint8

// The severities.
const (
	Error   Severity = iota // the source cannot run correctly
	Warning                 // it runs, with a documented loss (e.g. schema facts from the present)
)

// String returns "error" or "warning".
func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Problem is one finding of [Preflight]: what is wrong and exactly what to change.
type Problem struct {
	Severity Severity
	Check    string // short name: "binlog_format", "privileges", …
	Message  string // what was found and the statement or setting that fixes it
	// Err is the cause of a "connect" problem (the client's error, for the fault model:
	// access denied is terminal, a server away retryable); nil for the others.
	Err error
}

func (p Problem) String() string { return p.Severity.String() + ": " + p.Check + ": " + p.Message }

// Preflight checks that the server and the user are fit for the binlog stream: the binary
// log is on, row-based with full images, carries full row metadata, the user holds the
// replication grants, the server is the one of cfg.Server (when set), and the position the
// stream reads from (cfg.Position, else the specific-offset start) is on the server: its
// binlog file exists and holds the offset, its GTIDs are within the server's binlog and not
// purged. It returns nil when all is well; a failure to connect is itself a Problem (Check
// "connect"). `ingest plan` shows the problems; `ingest apply` and [Source.Run], on every
// reconnect, refuse to read on an Error ([Refuse]).
//
// binlog_format and binlog_row_image are read as GLOBAL values, which every new session
// (and so every new client connection) starts with. A session may still set its own
// binlog_format (it needs SUPER or BINLOG ADMIN); the rows it writes as statements are
// caught by the stream, which stops at a DML statement of a captured table
// ([StatementFormatError]).
func Preflight(ctx context.Context, cfg Config) []Problem {
	c, err := cfg.withDefaults()
	if err != nil {
		return []Problem{{Severity: Error, Check: "config", Message: err.Error()}}
	}
	db, err := (&Source{cfg: c}).openDB()
	if err == nil {
		defer db.Close()
		err = db.PingContext(ctx)
	}
	if err != nil {
		err = fmt.Errorf("connect to %s as %s: %w", c.Addr, c.User, err)
		return []Problem{{Severity: Error, Check: "connect", Message: err.Error(), Err: err}}
	}
	var problems []Problem
	problems = append(problems, checkVariables(ctx, db)...)
	problems = append(problems, checkGrants(ctx, db, c.User)...)
	if c.Server != "" {
		id, err := readServerIdentity(ctx, db)
		if err != nil {
			problems = append(problems, Problem{Severity: Error, Check: "server", Message: err.Error()})
		} else {
			problems = append(problems, checkServerIdentity(c.Server, id)...)
		}
	}
	if from := c.readFrom(); !from.IsZero() {
		problems = append(problems, checkPosition(ctx, db, from, !c.Position.IsZero())...)
	}
	return problems
}

// readFrom is the position a stream of c reads from when it is known before connecting:
// the stored one, or the specific-offset start.
func (c Config) readFrom() binlogpos.Position {
	if c.Position.IsZero() && c.Startup == StartSpecific {
		return c.StartPosition
	}
	return c.Position
}

// Refuse returns a [PreflightError] with the Error problems of a [Preflight], or nil when
// there are none. A server that could not be reached is a [RetryableError] instead: nothing
// is known of it yet; one that refused the user (access denied) is terminal.
func Refuse(addr string, problems []Problem) error {
	var errs []Problem
	for _, p := range problems {
		if p.Check == "connect" {
			cause := p.Err
			if cause == nil {
				cause = errors.New(p.Message)
			}
			return retryableOp("connect", cause)
		}
		if p.Severity == Error {
			errs = append(errs, p)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return &PreflightError{Addr: addr, Problems: errs}
}

// variableRule is one server variable the stream depends on.
type variableRule struct {
	name     string
	want     string
	severity Severity
	fix      string
	optional bool // a server without the variable is fine
}

var variableRules = []variableRule{
	{name: "log_bin", want: "ON", severity: Error, fix: "start the server with log_bin (e.g. --log-bin=mysql-bin) and a server_id; it cannot be set at run time"},
	{name: "binlog_format", want: "ROW", severity: Error, fix: "SET GLOBAL binlog_format = 'ROW' (and in the server configuration, so it survives a restart)"},
	{name: "binlog_row_image", want: "FULL", severity: Error, fix: "SET GLOBAL binlog_row_image = 'FULL' (and in the server configuration)"},
	{name: "binlog_row_metadata", want: "FULL", severity: Warning, fix: "SET GLOBAL binlog_row_metadata = 'FULL' (and in the server configuration); without it column names, " +
		"signedness, character sets and ENUM/SET labels come from the schema history alone, so a start from a past position " +
		"without a stored history takes the columns of today and stops at the first table whose columns changed since"},
	{name: "gtid_strict_mode", want: "ON", severity: Warning, optional: true, // MariaDB only
		fix: "SET GLOBAL gtid_strict_mode = ON (and in the server configuration): without it the sequence numbers " +
			"of a GTID domain may go backwards, and ingest orders positions by them (the stop of --until-caught-up, " +
			"the snapshot's hand-off to the stream)"},
	{name: "binlog_transaction_compression", want: "OFF", severity: Error, optional: true,
		fix: "SET GLOBAL binlog_transaction_compression = OFF (and in the server configuration): ingest cannot read " +
			"compressed transactions (MySQL 8.0.20+)"},
}

func checkVariables(ctx context.Context, db *sql.DB) []Problem {
	var problems []Problem
	for _, r := range variableRules {
		var val sql.NullString
		err := db.QueryRowContext(ctx, "SELECT @@GLOBAL."+r.name).Scan(&val)
		if err != nil && r.optional {
			continue // MariaDB and MySQL before 8.0.20 have no binlog_transaction_compression
		}
		if err != nil {
			if r.name == "binlog_row_metadata" { // before MySQL 8.0.1 / MariaDB 10.5
				problems = append(problems, Problem{Severity: Warning, Check: r.name,
					Message: "the server has no binlog_row_metadata; upgrade to MariaDB 10.5+ or MySQL 8.0.1+ for full row metadata"})
				continue
			}
			problems = append(problems, Problem{Severity: Error, Check: r.name, Message: fmt.Sprintf("read @@%s: %v", r.name, err)})
			continue
		}
		got := strings.ToUpper(val.String)
		switch {
		case got == "1" && r.want == "ON":
			got = "ON"
		case got == "0" && r.want == "OFF":
			got = "OFF"
		}
		if got != r.want {
			problems = append(problems, Problem{Severity: r.severity, Check: r.name,
				Message: fmt.Sprintf("%s is %s, want %s: %s", r.name, val.String, r.want, r.fix)})
		}
	}
	return problems
}

// privilegeNeeds are the grants the stream needs, each with the names a server may show it
// under in SHOW GRANTS.
var privilegeNeeds = []struct {
	grant string
	shown []string
	why   string
}{
	{"REPLICATION SLAVE", []string{"REPLICATION SLAVE", "REPLICATION REPLICA"}, "to read the binlog"},
	{"BINLOG MONITOR", []string{"BINLOG MONITOR", "REPLICATION CLIENT", "SUPER"}, "for SHOW MASTER STATUS and SHOW BINARY LOGS (MySQL: REPLICATION CLIENT)"},
	{"SELECT", []string{"SELECT"}, "to read information_schema facts and snapshot the tables"},
}

func checkGrants(ctx context.Context, db *sql.DB, user string) []Problem {
	grants, err := history.QueryStrings(ctx, db, "SHOW GRANTS")
	if err != nil {
		return []Problem{{Severity: Error, Check: "privileges", Message: fmt.Sprintf("SHOW GRANTS: %v", err)}}
	}
	global := ""
	for _, g := range grants {
		up := strings.ToUpper(g)
		if strings.Contains(up, " ON *.* ") {
			global += up
		}
	}
	hasAll := strings.Contains(global, "ALL PRIVILEGES")
	var missing, why []string
	for _, need := range privilegeNeeds {
		found := hasAll
		for _, name := range need.shown {
			found = found || strings.Contains(global, name)
		}
		if !found {
			missing = append(missing, need.grant)
			why = append(why, need.grant+" "+need.why)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return []Problem{{Severity: Error, Check: "privileges", Message: fmt.Sprintf(
		"user %s lacks %s (%s): GRANT %s ON *.* TO '%s'@'<host>'", user, strings.Join(missing, ", "),
		strings.Join(why, "; "), strings.Join(missing, ", "), user)}}
}
