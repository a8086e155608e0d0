package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// printVersion prints the version, the Go version and, from the build
// information, the VCS revision and the module versions.
func (a *app) printVersion() error {
	var b strings.Builder
	fmt.Fprintf(&b, "ingest %s\n", version)
	fmt.Fprintf(&b, "go: %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if info, ok := debug.ReadBuildInfo(); ok {
		writeBuildInfo(&b, info)
	}
	_, err := fmt.Fprint(a.stdout, b.String())
	return err
}

func writeBuildInfo(b *strings.Builder, info *debug.BuildInfo) {
	for _, s := range info.Settings {
		if strings.HasPrefix(s.Key, "vcs.") {
			fmt.Fprintf(b, "%s: %s\n", s.Key, s.Value)
		}
	}
	fmt.Fprintf(b, "module: %s %s\n", info.Main.Path, info.Main.Version)
	for _, d := range info.Deps {
		v := d.Version
		if d.Replace != nil {
			v += " => " + d.Replace.Path + " " + d.Replace.Version
		}
		fmt.Fprintf(b, "  %s %s\n", d.Path, v)
	}
}
