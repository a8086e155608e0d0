package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"strings"
)

// The chart: one section of horizontal bars per suite (rows/s), then peak RSS and latency,
// each with its target drawn as a red line. Drawn with the standard library only.

var (
	colBackground = color.RGBA{255, 255, 255, 255}
	colText       = color.RGBA{30, 30, 30, 255}
	colGrid       = color.RGBA{225, 225, 225, 255}
	colRaw        = color.RGBA{150, 150, 150, 255}
	colALO        = color.RGBA{31, 119, 180, 255}
	colEOS        = color.RGBA{255, 127, 14, 255}
	colQuarter    = color.RGBA{140, 185, 225, 255}
	colTarget     = color.RGBA{214, 39, 40, 255}
)

// Chart geometry in pixels.
const (
	chartW    = 1280
	margin    = 20
	labelW    = 34 * advance * 2 // label column: 34 characters at scale 2
	valueW    = 26 * advance * 2 // room right of the longest bar for its value
	barH      = 18
	barGap    = 6
	titleH    = 7*2 + 14
	sectionGp = 18
)

type bar struct {
	label string
	value float64
	text  string
	color color.RGBA
}

type section struct {
	title  string
	bars   []bar
	target float64 // drawn when > 0
}

// writeChart draws the results into a PNG file at path.
func writeChart(path string, r *results) error {
	return drawChart(path, r.summary(), chartSections(r))
}

// drawChart draws a title, two lines under it (of header) and the sections into a PNG
// file at path.
func drawChart(path string, header []string, secs []section) error {
	h := margin + titleH + 2*(7*2+8)
	for _, s := range secs {
		h += titleH + len(s.bars)*(barH+barGap) + sectionGp
	}
	img := image.NewRGBA(image.Rect(0, 0, chartW, h+margin))
	fillRect(img, 0, 0, chartW, h+margin, colBackground)
	y := margin
	lines := append(header, "", "")
	drawText(img, margin, y, lines[0], 2, colText)
	y += titleH
	for _, l := range lines[1:3] {
		drawText(img, margin, y, truncate(l, (chartW-2*margin)/advance), 1, colText)
		y += 7 + 8
	}
	y += 7 * 2
	for _, s := range secs {
		y = drawSection(img, y, s)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func drawSection(img *image.RGBA, y int, s section) int {
	drawText(img, margin, y+6, s.title, 2, colText)
	y += titleH
	x0 := margin + labelW
	full := chartW - margin - valueW - x0
	top := s.target
	for _, b := range s.bars {
		top = max(top, b.value)
	}
	if top <= 0 {
		top = 1
	}
	scale := float64(full) / top
	height := len(s.bars) * (barH + barGap)
	fillRect(img, x0-1, y-2, 1, height, colGrid)
	if s.target > 0 { // first, so that the bars and their values are drawn over it
		tx := x0 + int(s.target*scale)
		for py := y - 4; py < y+height; py += 6 {
			fillRect(img, tx, py, 2, 4, colTarget)
		}
	}
	for _, b := range s.bars {
		drawText(img, margin, y+2, truncate(b.label, 34), 2, colText)
		w := int(b.value * scale)
		fillRect(img, x0, y, max(w, 1), barH, b.color)
		drawText(img, x0+w+8, y+2, b.text, 2, colText)
		y += barH + barGap
	}
	return y + sectionGp
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "."
	}
	return s
}

// chartSections turns the results into chart sections.
func chartSections(r *results) []section {
	if r.Mode == partPeers {
		return peersChartSections(r)
	}
	var secs []section
	for _, suite := range r.suites() {
		s := section{title: suite + ": rows/s (red: target)"}
		for _, m := range r.Measurements {
			if m.Suite != suite {
				continue
			}
			text := thousands(m.RowsPerSec)
			if m.Ratio > 0 {
				text += fmt.Sprintf(" (%.0f%%)", 100*m.Ratio)
				target := targetCatchup
				if suite == "snapshot" {
					target = targetSnapshot
				}
				s.target = target * m.RowsPerSec / m.Ratio
			}
			s.bars = append(s.bars, bar{label: m.Name, value: m.RowsPerSec, text: text, color: barColor(m)})
		}
		secs = append(secs, s)
	}
	if rss := rssSection(r); len(rss.bars) > 0 {
		secs = append(secs, rss)
	}
	if lat := latencySection(r); len(lat.bars) > 0 {
		secs = append(secs, lat)
	}
	return secs
}

func barColor(m measurement) color.RGBA {
	switch {
	case m.Kind == kindRaw:
		return colRaw
	case strings.Contains(m.Name, "N/4"):
		return colQuarter
	case m.Guarantee == exactlyOnce:
		return colEOS
	}
	return colALO
}

func rssSection(r *results) section {
	s := section{title: fmt.Sprintf("peak RSS of ingest, MiB (target <= %d)", targetRSSMiB), target: targetRSSMiB}
	for _, m := range r.Measurements {
		if m.Kind == kindIngest {
			label := strings.TrimPrefix(strings.TrimPrefix(m.Suite, "catch-up "), "snapshot") + " " + strings.TrimPrefix(m.Name, "ingest ")
			if strings.HasPrefix(m.Suite, "snapshot") {
				label = "snapshot " + strings.TrimPrefix(m.Name, "ingest ")
			}
			s.bars = append(s.bars, bar{label: strings.TrimSpace(label), value: m.PeakRSSMiB, text: fmt.Sprintf("%.0f", m.PeakRSSMiB), color: barColor(m)})
		}
	}
	for _, l := range r.Latency {
		if l.Name == nameRawRelay {
			continue
		}
		c := colALO
		if l.Guarantee == exactlyOnce {
			c = colEOS
		}
		s.bars = append(s.bars, bar{label: fmt.Sprintf("latency %dk %s", l.TargetRate/1000, l.Guarantee), value: l.PeakRSSMiB, text: fmt.Sprintf("%.0f", l.PeakRSSMiB), color: c})
	}
	return s
}

func latencySection(r *results) section {
	var target float64
	base := intConfig(r.Config, "latency_rate")
	for _, l := range r.Latency {
		if l.Name == nameRawRelay && l.TargetRate == base {
			target = l.P99ms + targetP99OverRelay
		}
	}
	s := section{title: fmt.Sprintf("commit-to-Kafka latency, ms (target: at-least-once p99 at %d rows/s <= the relay's + %.0f)", base, targetP99OverRelay),
		target: target}
	for _, l := range r.Latency {
		c, name := colALO, fmt.Sprintf("%dk %s", l.TargetRate/1000, l.Guarantee)
		switch {
		case l.Name == nameRawRelay:
			c, name = colRaw, fmt.Sprintf("%dk raw relay", l.TargetRate/1000)
		case l.Guarantee == exactlyOnce:
			c = colEOS
		}
		for _, p := range []struct {
			name string
			v    float64
		}{{"p50", l.P50ms}, {"p99", l.P99ms}, {"max", l.Maxms}} {
			s.bars = append(s.bars, bar{label: fmt.Sprintf("%s %s", name, p.name), value: p.v, text: fmt.Sprintf("%.1f", p.v), color: c})
		}
	}
	return s
}
