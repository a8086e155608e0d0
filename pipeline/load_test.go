package pipeline

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "time/tzdata" // the zone checks must not depend on the machine

	"github.com/ingestkit/ingest/internal/suggest"
	"github.com/ingestkit/ingest/secrets"
)

var update = flag.Bool("update", false, "rewrite the .golden files of testdata/bad")

// secretMarker is in every test secret value, so that a test can look for
// it in any output.
const secretMarker = "SECRETVALUE"

var testSecrets = map[string]string{
	"mysql-password": secretMarker + "-mysql",
	"kafka-ak":       secretMarker + "-ak",
	"kafka-sk":       secretMarker + "-sk",
	"port-secret":    secretMarker + "-port",
	"pattern-secret": secretMarker + ".bad[",
	"mode-secret":    secretMarker + "initail",
}

var testVars = map[string]string{
	"kafka.bootstrap": "127.0.0.1:9092",
	"app.name":        "ingest",
}

// testResolver resolves the test secrets and variables, and nothing from
// the real environment.
func testResolver() *secrets.Resolver {
	noEnv := func(string) (string, bool) { return "", false }
	return secrets.NewResolver(
		[]secrets.Provider{
			&secrets.Map{Values: testSecrets, HintFunc: func(name string) string {
				return fmt.Sprintf("add %q to the secrets file test-secrets.yaml", name)
			}},
			secrets.NewEnv(secrets.SecretEnvPrefix, noEnv),
		},
		[]secrets.Provider{
			&secrets.Map{Values: testVars, HintFunc: func(name string) string { return "pass --var " + name + "=VALUE" }},
			secrets.NewEnv(secrets.VarEnvPrefix, noEnv),
		},
	)
}

func testOptions() LoadOptions {
	return LoadOptions{Context: context.Background(), Resolver: testResolver()}
}

// TestBadPipelines loads each testdata/bad/*.yaml and compares the errors
// with its .golden file, byte for byte. Run with -update to rewrite them.
func TestBadPipelines(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad pipelines: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			_, err := Load(file, testOptions())
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("Load returned %v (%T), want Errors", err, err)
			}
			checkErrors(t, file, errs)
			got := err.Error() + "\n"
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("errors differ from %s\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}

// checkErrors asserts what must hold for every error: a position in the
// file, the file name, sorted order and no secret value.
func checkErrors(t *testing.T, file string, errs Errors) {
	t.Helper()
	for i, e := range errs {
		if e.File != file || e.Line < 1 || e.Col < 1 {
			t.Errorf("error %q has no proper position", e)
		}
		if i > 0 && (errs[i-1].Line > e.Line || errs[i-1].Line == e.Line && errs[i-1].Col > e.Col) {
			t.Errorf("errors not sorted: %q before %q", errs[i-1], e)
		}
	}
	if strings.Contains(errs.Error(), secretMarker) {
		t.Errorf("a secret value appears in the errors:\n%v", errs)
	}
}

const minimal = `
source:
  type: mysql
  hostname: db.internal
  username: cdc
  password: ${secret_values.mysql-password}
  tables: app.\.*
sink:
  type: upsert-kafka
  properties.bootstrap.servers: ${kafka.bootstrap}
`

func TestDefaults(t *testing.T) {
	def, err := Parse("jobs/orders.yaml", []byte(minimal), testOptions())
	if err != nil {
		t.Fatal(err)
	}
	s, k, p := def.Source, def.Sink, def.Pipeline
	checks := []struct {
		name      string
		got, want any
	}{
		{"source.port", s.Port, 3306},
		{"source.scan.startup.mode", s.StartupMode, StartupInitial},
		{"source.chunk.size", s.ChunkSize, 8096},
		{"source.fetch.size", s.FetchSize, 1024},
		{"source.connect.timeout", s.ConnectTimeout.String(), "30s"},
		{"source.connect.max-retries", s.ConnectMaxRetries, 3},
		{"source.connection.pool.size", s.ConnectionPoolSize, 20},
		{"source.heartbeat.interval", s.HeartbeatInterval.String(), "30s"},
		{"source.treat-tinyint1-as-boolean.enabled", s.TreatTinyInt1AsBoolean, true},
		{"source.server-id", s.ServerID.IsZero(), true},
		{"source.password", s.Password.Reveal(), testSecrets["mysql-password"]},
		{"sink.bootstrap", k.BootstrapServers, "127.0.0.1:9092"},
		{"sink.delivery-guarantee", k.DeliveryGuarantee, DeliveryAtLeastOnce},
		{"sink.topic.auto-create", k.TopicAutoCreate, true},
		{"sink.transaction.interval", k.TransactionInterval.String(), "1s"},
		{"sink.transaction.max-bytes", k.TransactionMaxBytes, int64(64 << 20)},
		{"sink.json.timestamp", k.JSON.TimestampFormat, TimestampSQL},
		{"sink.json.json-column-as", k.JSON.JSONColumnAs, JSONColumnAsString},
		{"sink.json.decimal-as", k.JSON.DecimalAs, DecimalAsNumber},
		{"sink.json.time-as", k.JSON.TimeAs, TimeAsString},
		{"sink.aliyun", k.Aliyun.Enabled(), false},
		{"pipeline.name", p.Name, "orders"},
		{"pipeline.parallelism", p.Parallelism, 1},
		{"pipeline.schema.change.behavior", p.SchemaChangeBehavior, SchemaEvolve},
		{"pipeline.route-mode", p.RouteMode.String(), "ALL_MATCH"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestDefaultsAreValid parses every default through its option's value,
// which Parse would otherwise only find out about with a panic.
func TestDefaultsAreValid(t *testing.T) {
	var d Definition
	tables := [][]option{sourceOptions(&d.Source), sinkOptions(&d.Sink), settingsOptions(&d.Pipeline),
		routeOptions(new(Route)), transformOptions(new(Transform))}
	for _, opts := range tables {
		for _, o := range opts {
			if o.def == "" {
				continue
			}
			if err := o.val.set(o.def); err != nil {
				t.Errorf("default %q of %s: %v", o.def, o.key, err)
			}
			if got := o.val.get(); !strings.EqualFold(got, o.def) {
				t.Errorf("default of %s reads back as %q, want %q", o.key, got, o.def)
			}
		}
	}
}

func TestTypedValues(t *testing.T) {
	src := strings.Replace(minimal, "  tables: app.\\.*\n", `  tables: app.\.*
  server-id: 5400-5403
  scan.startup.mode: Specific-Offset
  scan.startup.specific-offset.gtid-set: 0-1-100
  connect.timeout: 2 min
  jdbc.properties.useSSL: "true"
  jdbc.properties.verifyServerCertificate: "true"
  jdbc.properties.trustCertificateKeyStoreUrl: /etc/ingest/mysql-ca.jks
  jdbc.properties.trustCertificateKeyStorePassword: changeit
`, 1) + `  sink.custom-header: app:ingest;env:prod
  sink.buffer-flush.max-rows: 500
  sink.buffer-flush.interval: 1000
  properties.sasl.jaas.config: org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="${secret_values.kafka-sk}";
  properties.acks: ALL
  properties.security.protocol: SASL_SSL
  properties.sasl.mechanism: PLAIN
transform:
  - source-table: app.events
    primary-keys: event_id, ` + "`line no`" + `
pipeline:
  parallelism: 4
  route-mode: first_match
  local-time-zone: UTC+08:00
`
	def, err := Parse("p.yaml", []byte(src), testOptions())
	if err != nil {
		t.Fatal(err)
	}
	s, k := def.Source, def.Sink
	if s.ServerID != (ServerIDRange{5400, 5403}) || s.ServerID.Size() != 4 {
		t.Errorf("server-id = %v", s.ServerID)
	}
	if s.StartupMode != StartupSpecificOffset || s.ConnectTimeout.Minutes() != 2 {
		t.Errorf("mode %q, timeout %v", s.StartupMode, s.ConnectTimeout)
	}
	if s.JDBCProperties["useSSL"].Reveal() != "true" || !def.IsSecret("source.jdbc.properties.trustCertificateKeyStorePassword") {
		t.Errorf("jdbc properties %v", s.JDBCProperties)
	}
	if len(k.CustomHeaders) != 2 || k.CustomHeaders[1] != (Header{"env", "prod"}) {
		t.Errorf("custom headers %v", k.CustomHeaders)
	}
	if k.BufferFlushMaxRows != 500 || k.BufferFlushInterval.Seconds() != 1 {
		t.Errorf("buffer flush %d %v", k.BufferFlushMaxRows, k.BufferFlushInterval)
	}
	if !def.IsSecret("sink.properties.sasl.jaas.config") || !strings.Contains(k.Properties["sasl.jaas.config"].Reveal(), testSecrets["kafka-sk"]) {
		t.Error("sasl.jaas.config is not a resolved secret")
	}
	if got := def.Transforms[0].PrimaryKeys; len(got) != 2 || got[1] != "line no" {
		t.Errorf("primary keys %q", got)
	}
	if def.Pipeline.RouteMode.String() != "FIRST_MATCH" || def.Pipeline.Parallelism != 4 {
		t.Errorf("pipeline %+v", def.Pipeline)
	}
	if p := def.Pos["sink.sink.custom-header"]; p.Line == 0 {
		t.Error("no position recorded for sink.custom-header")
	}
}

func TestErrorAt(t *testing.T) {
	def, err := Parse("p.yaml", []byte(minimal), testOptions())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ path, want string }{
		{"source.tables", "p.yaml:7:11: source.tables: no table matches"},
		{"source.port", "p.yaml:2:1: source.port: no table matches"},
		{"nowhere", "p.yaml:1:1: nowhere: no table matches"},
	}
	for _, c := range cases {
		if got := def.ErrorAt(c.path, "no table matches").Error(); got != c.want {
			t.Errorf("ErrorAt(%q) = %q, want %q", c.path, got, c.want)
		}
	}
}

func TestPlaceholderColumn(t *testing.T) {
	cases := []struct {
		name, value string
		line, col   int
	}{
		{"plain", `  hostname: ab${missing}`, 3, 15},
		{"multibyte prefix", `  hostname: é€${missing}`, 3, 15},
		{"double quoted", `  hostname: "ab${missing}"`, 3, 16},
		{"single quoted", `  hostname: 'ab${missing}'`, 3, 16},
		{"escape before", `  hostname: "a\tb${missing}"`, 3, 13},
		{"block scalar", "  hostname: |\n    ab${missing}", 3, 13},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "source:\n  type: mysql\n" + c.value + "\n"
			_, err := Parse("p.yaml", []byte(src), testOptions())
			var errs Errors
			errors.As(err, &errs)
			for _, e := range errs {
				if e.Path == "source.hostname" {
					if e.Line != c.line || e.Col != c.col {
						t.Errorf("position %d:%d, want %d:%d (%v)", e.Line, e.Col, c.line, c.col, e)
					}
					return
				}
			}
			t.Fatalf("no error for source.hostname in\n%v", err)
		})
	}
}

func TestDefaultName(t *testing.T) {
	cases := map[string]string{
		"jobs/orders.yaml":                  "orders",
		"examples/quickstart/pipeline.yaml": "quickstart",
		"/etc/ingest/Pipeline.yml":          "ingest",
		"my job@prod.yaml":                  "my-job-prod",
	}
	for file, want := range cases {
		if got := defaultName(file); got != want {
			t.Errorf("defaultName(%q) = %q, want %q", file, got, want)
		}
	}
}

func TestParseTimeZone(t *testing.T) {
	good := []string{"UTC", "Z", "Asia/Shanghai", "+08:00", "-0530", "GMT+8", "UTC-03:30", "UT+01"}
	for _, z := range good {
		if _, err := ParseTimeZone(z); err != nil {
			t.Errorf("ParseTimeZone(%q): %v", z, err)
		}
	}
	bad := []string{"", "Local", "Mars/Olympus", "+25:00", "GMT+8:99", "+123", "UTC+"}
	for _, z := range bad {
		if _, err := ParseTimeZone(z); err == nil {
			t.Errorf("ParseTimeZone(%q) succeeded", z)
		}
	}
}

func TestSuggest(t *testing.T) {
	opts := keys(sinkOptions(new(Sink)))
	cases := map[string]string{
		"sink.delivery.guarantee": "sink.delivery-guarantee",
		"SINK.TOPIC.AUTO-CREATE":  "sink.topic.auto-create",
		"topics":                  "topic",
		"completely.different":    "",
	}
	for in, want := range cases {
		if got := suggest.Closest(in, opts); got != want {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLoadRefusesHugeFiles: a file over MaxFileSize is refused before it is parsed, with
// the limit in the message.
func TestLoadRefusesHugeFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.yaml")
	data := []byte(minimal + "# " + strings.Repeat("x", MaxFileSize) + "\n")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path, testOptions())
	if err == nil || !strings.Contains(err.Error(), "larger than 1024 KiB") {
		t.Fatalf("Load of a %d-byte file: %v, want the size limit", len(data), err)
	}
	if err := os.WriteFile(path, []byte(minimal), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, testOptions()); err != nil {
		t.Fatalf("Load of the minimal pipeline: %v", err)
	}
}
