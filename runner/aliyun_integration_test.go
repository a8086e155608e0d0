//go:build integration

package runner

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/ingestkit/ingest/aliyun/aliyuntest"
	"github.com/ingestkit/ingest/internal/testenv"
	"github.com/ingestkit/ingest/pipeline"
)

// ApsaraMQ end to end: the aliyun.kafka.* options point at the fake OpenAPI server
// (HTTPS, signatures checked), whose CreateTopic creates the topic on the real broker, which
// does not create topics itself (auto.create.topics.enable=false).

// apsaraPrefix is a fresh topic name prefix valid for ApsaraMQ.
func apsaraPrefix(t *testing.T) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "ali_" + hex.EncodeToString(b)
}

// brokerBacked makes srv's CreateTopic create the topic on the test broker, compacted when
// the OpenAPI call asks for it; the topics are deleted when the test ends. The hook calls
// also, when they are set, for each topic created.
func brokerBacked(t *testing.T, srv *aliyuntest.Server, also func(name string)) {
	t.Helper()
	adm := kadm.NewClient(testenv.Kafka(t))
	var created []string
	srv.SetOnCreate(func(name string, partitions int, compact bool) error {
		if err := createOnBroker(adm, name, partitions, compact); err != nil {
			return err
		}
		created = append(created, name)
		if also != nil {
			also(name)
		}
		return nil
	})
	t.Cleanup(func() {
		srv.SetOnCreate(nil)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = adm.DeleteTopics(ctx, created...)
	})
}

func createOnBroker(adm *kadm.Client, name string, partitions int, compact bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	configs := map[string]*string{}
	if compact {
		c := "compact"
		configs["cleanup.policy"] = &c
	}
	resp, err := adm.CreateTopic(ctx, int32(partitions), 1, configs, name)
	if err == nil {
		err = resp.Err
	}
	return err
}

// apsaraRunDefinition is a pipeline over db whose sink is ApsaraMQ at srv: orders fans out
// to <prefix>_orders and <prefix>_orders_copy, items goes to <prefix>_items. With
// akID empty, the AccessKey options are left out (the default credential chain).
func apsaraRunDefinition(t *testing.T, srv *aliyuntest.Server, db, prefix, akID, akSecret string) *pipeline.Definition {
	t.Helper()
	sink := fmt.Sprintf(`  sink.topic.partitions: 3
  aliyun.kafka.instanceId: %s
  aliyun.kafka.endpoint: %s
  aliyun.kafka.regionId: %s`, aliyuntest.InstanceID, srv.Host(), aliyuntest.RegionID)
	if akID != "" {
		sink += "\n  aliyun.kafka.accessKeyId: ${secret_values.ak-id}\n  aliyun.kafka.accessKeySecret: ${secret_values.ak-secret}"
	}
	routes := fmt.Sprintf(`  - source-table: %[1]s.orders
    sink-table: %[2]s_orders
  - source-table: %[1]s.orders
    sink-table: %[2]s_orders_copy
  - source-table: %[1]s.items
    sink-table: %[2]s_<>
    replace-symbol: <>
`, db, prefix)
	return routedDefinition(t, db, db+`.\.*`, sink, routes, "", map[string]string{"ak-id": akID, "ak-secret": akSecret})
}

// captureLogs returns a logger writing into a buffer, and makes it the default logger too
// until the test ends, so that nothing logged anywhere escapes the check.
func captureLogs(t *testing.T) (*slog.Logger, *syncBuffer) {
	t.Helper()
	log, buf := bufferLogger()
	old := slog.Default()
	slog.SetDefault(log)
	t.Cleanup(func() { slog.SetDefault(old) })
	return log, buf
}

func runApsara(t *testing.T, def *pipeline.Definition, log *slog.Logger) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	err := Run(ctx, def, Options{StateDir: t.TempDir(), UntilCaughtUp: true, Logger: log})
	if ctx.Err() != nil {
		t.Fatalf("Run did not stop by itself: %v", err)
	}
	return err
}

func TestApsaraMQApply(t *testing.T) {
	srv := aliyuntest.NewServer()
	defer srv.Close()
	useFake(t, srv)
	srv.SetReadyAfter(1)
	name, db := testenv.Database(t)
	testenv.Exec(t, db,
		"CREATE TABLE orders (id INT PRIMARY KEY, v VARCHAR(20))", "INSERT INTO orders VALUES (1,'a'),(2,'b')",
		"CREATE TABLE items (id INT PRIMARY KEY, v VARCHAR(20))", "INSERT INTO items VALUES (7,'x')")
	prefix := apsaraPrefix(t)
	orders, copied, items := prefix+"_orders", prefix+"_orders_copy", prefix+"_items"
	adm := kadm.NewClient(testenv.Kafka(t))
	// While <prefix>_orders is being created, another client creates <prefix>_orders_copy:
	// the sink's listing is stale by then and its CreateTopic gets BIZ_TOPIC_ALREADY_EXISTS.
	brokerBacked(t, srv, func(created string) {
		if created == orders {
			if err := createOnBroker(adm, copied, 3, true); err != nil {
				t.Errorf("create %s: %v", copied, err)
			}
			srv.AddTopic(copied, 3)
		}
	})
	deleteTopicsAtEnd(t, copied)
	// The first CreateTopic is throttled twice.
	srv.Inject("CreateTopic", 2, aliyuntest.ThrottlingUser())

	log, logs := captureLogs(t)
	def := apsaraRunDefinition(t, srv, name, prefix, aliyuntest.AccessKeyID, aliyuntest.AccessKeySecret)
	if err := runApsara(t, def, log); err != nil {
		t.Fatalf("Run: %v\nlogs:\n%s", err, logs)
	}

	// The topics were created through the OpenAPI, compacted, with sink.topic.partitions.
	for _, topic := range []string{orders, items} {
		top, ok := srv.Topic(topic)
		if !ok || top.Partitions != 3 || !top.Compact || !top.Local || top.Remark != "created-by-ingest" || !top.Ready {
			t.Errorf("OpenAPI topic %s: %+v (found %v), want 3 compacted local partitions, ready", topic, top, ok)
		}
	}
	var answers []string
	for _, c := range srv.Calls("CreateTopic") {
		answers = append(answers, c.Params.Get("Topic")+":"+c.Code)
	}
	if len(answers) != 5 || !strings.HasSuffix(answers[0], ":Throttling.User") || !strings.HasSuffix(answers[1], ":Throttling.User") ||
		!strings.HasSuffix(answers[2], ":200") {
		t.Errorf("CreateTopic answers %v, want two throttled then three more", answers)
	}
	if !strings.Contains(strings.Join(answers, ","), copied+":BIZ_TOPIC_ALREADY_EXISTS") {
		t.Errorf("CreateTopic answers %v, want BIZ_TOPIC_ALREADY_EXISTS for %s", answers, copied)
	}
	if srv.CallCount("GetTopicStatus") == 0 {
		t.Error("the sink did not wait for GetTopicStatus")
	}

	// The rows arrived on the real broker.
	wantOrders := map[string]string{`{"id":1}`: `{"id":1,"v":"a"}`, `{"id":2}`: `{"id":2,"v":"b"}`}
	for _, topic := range []string{orders, copied} {
		if got := materialize(consumeAll(t, topic)); !maps.Equal(got, wantOrders) {
			t.Errorf("%s: got %v, want %v", topic, got, wantOrders)
		}
	}
	if got := materialize(consumeAll(t, items)); !maps.Equal(got, map[string]string{`{"id":7}`: `{"id":7,"v":"x"}`}) {
		t.Errorf("%s: %v", items, got)
	}

	out := logs.String()
	for _, want := range []string{"idempotent writes turned off", "aliyun: call failed, retrying", "aliyun: created topic"} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, aliyuntest.AccessKeySecret) {
		t.Errorf("the AccessKey secret was logged:\n%s", out)
	}
}

// TestApsaraMQFailures: errors of the OpenAPI stop the run before any row is written, with a
// message that names the fix and holds no credential.
func TestApsaraMQFailures(t *testing.T) {
	name, db := testenv.Database(t)
	testenv.Exec(t, db, "CREATE TABLE orders (id INT PRIMARY KEY, v VARCHAR(20))", "INSERT INTO orders VALUES (1,'a')",
		"CREATE TABLE items (id INT PRIMARY KEY, v VARCHAR(20))")
	const wrongSecret = "Wrong-AccessKeySecret-0123456789"
	cases := []struct {
		name   string
		secret string
		inject func(*aliyuntest.Server)
		want   []string
	}{
		{"bad signature", wrongSecret, func(*aliyuntest.Server) {},
			[]string{"SignatureDoesNotMatch", "check aliyun.kafka.accessKeyId/accessKeySecret"}},
		{"Success false", aliyuntest.AccessKeySecret, func(s *aliyuntest.Server) {
			s.Inject("CreateTopic", aliyuntest.Forever, aliyuntest.SuccessFalse("InstanceQuotaExceeded", "the topic quota of the instance is used up"))
		}, []string{"Success:false", "InstanceQuotaExceeded", "the topic quota of the instance is used up"}},
		{"numeric code", aliyuntest.AccessKeySecret, func(s *aliyuntest.Server) {
			s.Inject("GetTopicList", aliyuntest.Forever, aliyuntest.NumericCode(400))
		}, []string{"aliyun: alikafka GetTopicList: 400: numeric error code"}},
		{"RAM permission", aliyuntest.AccessKeySecret, func(s *aliyuntest.Server) {
			s.Inject("CreateTopic", aliyuntest.Forever, aliyuntest.Forbidden())
		}, []string{"Forbidden.RAM", "grant the RAM identity alikafka:ListTopic and alikafka:CreateTopic"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := aliyuntest.NewServer()
			defer srv.Close()
			useFake(t, srv)
			brokerBacked(t, srv, nil)
			c.inject(srv)
			prefix := apsaraPrefix(t)
			log, logs := captureLogs(t)
			err := runApsara(t, apsaraRunDefinition(t, srv, name, prefix, aliyuntest.AccessKeyID, c.secret), log)
			if err == nil {
				t.Fatal("Run succeeded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			out := err.Error() + "\n" + logs.String()
			for _, cred := range []string{wrongSecret, aliyuntest.AccessKeySecret, aliyuntest.AccessKeyID} {
				if strings.Contains(out, cred) {
					t.Errorf("credential %q in the output:\n%s", cred, out)
				}
			}
			if ts := srv.Topics(); len(ts) != 0 {
				t.Errorf("topics created: %v", ts)
			}
		})
	}
}

// TestApsaraMQCredentialsNeverPrinted: the AccessKey secret and the STS token appear in no
// output of apply, plan or validate, also when every OpenAPI call fails with answers that
// quote them (the gateway's SignatureDoesNotMatch quotes the string-to-sign; a proxy's error
// page quotes the signed URL).
func TestApsaraMQCredentialsNeverPrinted(t *testing.T) {
	name, db := testenv.Database(t)
	testenv.Exec(t, db, "CREATE TABLE orders (id INT PRIMARY KEY, v VARCHAR(20))", "INSERT INTO orders VALUES (1,'a')")
	const (
		stsID     = "STS.NUfakeTemporaryAccessKeyId01"
		stsSecret = "FakeStsAccessKeySecret-abcdef012345"
		stsToken  = "CAIS-fake-sts-security-token-0123456789abcdefABCDEF+/="
	)
	credentials := []string{stsID, stsSecret, stsToken, aliyuntest.AccessKeyID, aliyuntest.AccessKeySecret}
	failures := map[string]aliyuntest.Response{
		"signature mismatch": aliyuntest.SignatureMismatch(),
		"echoed URL":         aliyuntest.EchoURL(502),
	}
	for _, chain := range []bool{true, false} {
		for fname, failure := range failures {
			t.Run(fmt.Sprintf("%s default chain %v", fname, chain), func(t *testing.T) {
				srv := aliyuntest.NewServer()
				defer srv.Close()
				useFake(t, srv)
				var def *pipeline.Definition
				if chain {
					// No AccessKey options: the SDK's default chain finds an STS
					// credential in the environment.
					t.Setenv("ALIBABA_CLOUD_ACCESS_KEY_ID", stsID)
					t.Setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", stsSecret)
					t.Setenv("ALIBABA_CLOUD_SECURITY_TOKEN", stsToken)
					t.Setenv("ALIBABA_CLOUD_ECS_METADATA_DISABLED", "true")
					t.Setenv("ALIBABA_CLOUD_CLI_PROFILE_DISABLED", "true")
					srv.AddCredential(stsID, stsSecret, stsToken)
					def = apsaraRunDefinition(t, srv, name, apsaraPrefix(t), "", "")
				} else {
					def = apsaraRunDefinition(t, srv, name, apsaraPrefix(t), aliyuntest.AccessKeyID, aliyuntest.AccessKeySecret)
				}
				srv.Inject("", aliyuntest.Forever, failure)
				log, logs := captureLogs(t)
				var out bytes.Buffer

				// apply
				if err := runApsara(t, def, log); err == nil {
					t.Error("apply succeeded")
				} else {
					fmt.Fprintf(&out, "apply: %v\n", err)
				}
				// plan, online and offline (what validate checks is offline)
				rep, err := Plan(context.Background(), def, Options{StateDir: t.TempDir()})
				if err != nil {
					fmt.Fprintf(&out, "plan: %v\n", err)
				} else {
					_ = rep.WriteText(&out)
					_ = rep.WriteJSON(&out)
					var listed bool
					for _, p := range rep.Problems {
						listed = listed || strings.Contains(p, "GetTopicList")
					}
					if !listed {
						t.Errorf("plan does not report the failed GetTopicList: %q", rep.Problems)
					}
				}
				p := pipeline.NewPlan(def)
				_ = p.WriteText(&out)
				_ = p.WriteJSON(&out)
				out.WriteString(logs.String())

				if n := srv.CallCount(""); n == 0 {
					t.Fatal("the OpenAPI was never called")
				}
				for _, cred := range credentials {
					if strings.Contains(out.String(), cred) {
						t.Errorf("credential %q in the output:\n%s", cred, out.String())
					}
				}
				if !strings.Contains(out.String(), "aliyun: alikafka") {
					t.Errorf("the output does not show the OpenAPI failure:\n%s", out.String())
				}
			})
		}
	}
}
