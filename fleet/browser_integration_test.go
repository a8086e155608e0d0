//go:build integration

package fleet_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/ingestkit/ingest/internal/testenv"
)

// browser returns the path of a headless Chromium, which scripts/services installs once.
func browser() (string, error) {
	repo, err := testenv.RepoRoot()
	if err != nil {
		return "", err
	}
	out, err := exec.Command(filepath.Join(repo, "scripts", "services"), "browser").Output()
	if err != nil {
		return "", fmt.Errorf("scripts/services browser: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// rowRE matches a pipeline's row of the status table in the DOM the browser built.
var rowRE = regexp.MustCompile(`<tr class="([a-z]+)"><td>([^<]+)</td><td>([a-z]+)</td>`)

// checkPageInBrowser loads worker w's status page in a headless Chromium: the DOM it builds
// (its parser adds the tbody the page leaves out) must have the page's title and one row per
// pipeline the worker owns, each streaming, and its screenshot must not be blank.
func (ft *fleetTest) checkPageInBrowser(w *worker) {
	ft.t.Helper()
	chrome, err := browser()
	if err != nil {
		ft.t.Fatalf("a headless browser for the status page: %v", err)
	}
	url := "http://" + w.addr + "/"
	owned := ft.ownedBy(w)
	dom := ft.chrome(chrome, "--dump-dom", url)
	if want := "<title>ingest serve: " + ft.group + "</title>"; !strings.Contains(dom, want) {
		ft.t.Errorf("the status page in the browser lacks %s:\n%s", want, dom)
	}
	if !strings.Contains(dom, "<tbody>") {
		ft.t.Errorf("the browser's DOM of the status page has no tbody: was it parsed as HTML?\n%s", dom)
	}
	rows := map[string]string{}
	for _, m := range rowRE.FindAllStringSubmatch(dom, -1) {
		rows[m[2]] = m[3]
	}
	for _, name := range owned {
		if phase, ok := rows[name]; !ok || phase != "streaming" {
			ft.t.Errorf("the status page in the browser: pipeline %s: phase %q, want a row with streaming (rows %v)", name, phase, rows)
		}
	}
	if len(rows) != len(owned) {
		ft.t.Errorf("the status page in the browser has %d pipeline rows, the worker owns %d %v", len(rows), len(owned), owned)
	}
	shot := filepath.Join(ft.dir, fmt.Sprintf("status-%d.png", w.n))
	ft.chrome(chrome, "--screenshot="+shot, "--window-size=1000,600", url)
	b, err := os.ReadFile(shot)
	if err != nil {
		ft.t.Fatalf("the browser's screenshot of the status page: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		ft.t.Fatalf("the browser's screenshot of the status page: %v", err)
	}
	colours := map[uint32]bool{}
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y += 4 {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 4 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[r>>8<<16|g>>8<<8|b>>8] = true
		}
	}
	if len(colours) < 3 {
		ft.t.Errorf("the browser's screenshot of the status page is blank (%d colours)", len(colours))
	}
	ft.t.Logf("status page of worker %d in %s: %d pipeline rows, all streaming; screenshot %dx%d, %d colours",
		w.n, filepath.Base(chrome), len(rows), img.Bounds().Dx(), img.Bounds().Dy(), len(colours))
}

// chrome runs the headless browser with args and returns its standard output.
func (ft *fleetTest) chrome(path string, args ...string) string {
	ft.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + filepath.Join(ft.dir, "chrome")}
	cmd := exec.CommandContext(ctx, path, append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		ft.t.Fatalf("%s %s: %v\n%s", path, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
