// Command ingest streams MySQL and MariaDB tables into Kafka as upserts,
// driven by a Flink CDC-style YAML pipeline file (docs/pipeline.md).
//
//	ingest validate PIPELINE.yaml   check the file offline; every error at once
//	ingest plan     PIPELINE.yaml   print the resolved pipeline and what connecting finds
//	ingest apply    PIPELINE.yaml   run the pipeline
//	ingest serve    --group G DIR   run as a worker of a group that shares its pipelines
//	ingest status   --group G       list a group's workers and their pipelines
//	ingest version                  print the version and build information (also --version)
//
// Exit codes: 0 done, 1 runtime failure (for plan: an error found), 2 invalid pipeline or
// usage.
//
// Signals: SIGINT, SIGTERM and SIGHUP stop gracefully (what was acknowledged is stored,
// exit 0, within --stop-timeout); SIGQUIT prints every goroutine's stack to stderr and
// the run goes on (signals.go).
package main

import (
	"os"

	_ "time/tzdata" // time zone options must check the same everywhere

	"github.com/ingestkit/ingest/internal/gctune"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = "dev"

func main() {
	gctune.Apply(os.LookupEnv) // GOGC=200 and a 160 MiB soft limit unless set (docs/metrics.md)
	ctx, stop := stopContext(os.Stderr)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.LookupEnv)
	stop()
	os.Exit(code)
}
