// Command fpr-plot measures the false-positive rate of the classic,
// split-block (SBBF) and counting Bloom filters of package bloom against
// the memory they use (bits per key), and draws docs/fpr-vs-bits.svg: one
// curve per layout, measured points over the theoretical curve (dashed).
// It uses only the standard library and the bloom package; the SVG is
// written by hand.
//
// Usage, from the repository root:
//
//	go run ./scripts/fpr-plot [-n 200000] [-probes 2000000] [-o docs/fpr-vs-bits.svg]
//
// It takes about 20 seconds and prints a Markdown table of the points.
//
// For every bits-per-key value b it builds, for n distinct keys,
//
//   - classic:  m = b·n bits, k = round(b·ln 2) (the optimal k for that m);
//   - sbbf:     ⌈b·n/256⌉ blocks of 256 bits (k = 8 is fixed);
//   - counting: m = b·n/4 four-bit counters, k = round((b/4)·ln 2),
//   - stable:   m = b·n/2 two-bit cells, k and P from bloom.StableSizing for
//     the classic rate at b bits per key,
//
// adds the n keys, and tests probes other keys. The theory is
// (1 − e^(−k·n/m))^k for classic and counting and the block-aware Poisson
// mixture of bloom.SBBFFalsePositiveRate for the SBBF. For the stable
// filter it is its stable-point rate (StablePointFPR), which a stream of
// distinct keys approaches from below: after only n keys the measured rate
// is under it.
//
// The scalable filter (growth 2, tightening 0.5, first sub-filter n/8, so
// n keys fill four sub-filters) cannot be given a size: for each target
// rate p0 from 0.3 down to 1e-4 it adds the n keys and is plotted at the
// bits per key it grew to. Its theory is the compound 1 − Π(1 − fill_i^k_i)
// of its sub-filters (Scalable.FPR).
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"strings"

	"github.com/probly/probly/bloom"
	"github.com/probly/probly/internal/bloomraw"
)

type point struct {
	bpk, measured, theory float64
}

type layout struct {
	name, color string
	points      []point
}

func key(dst []byte, tag byte, i uint64) []byte {
	dst = append(dst[:0], "fpr-plot/"...)
	dst = append(dst, tag)
	return binary.BigEndian.AppendUint64(dst, i)
}

func main() {
	n := flag.Uint64("n", 200_000, "keys per filter")
	probes := flag.Uint64("probes", 2_000_000, "non-member keys tested per point")
	out := flag.String("o", "docs/fpr-vs-bits.svg", "SVG file to write")
	flag.Parse()

	var bpks []float64
	for b := 4.0; b <= 48; b += 2 {
		bpks = append(bpks, b)
	}
	layouts := []*layout{
		{name: "classic", color: "#1f77b4"},
		{name: "sbbf (split-block)", color: "#d62728"},
		{name: "counting (4-bit)", color: "#2ca02c"},
		{name: "stable (2-bit cells)", color: "#9467bd"},
		{name: "scalable (s=2, r=0.5)", color: "#ff7f0e"},
	}
	type tester interface{ Test([]byte) bool }
	var buf []byte
	measure := func(add func([]byte), f tester) float64 {
		for i := uint64(0); i < *n; i++ {
			buf = key(buf, 'm', i)
			add(buf)
		}
		var fp uint64
		for i := uint64(0); i < *probes; i++ {
			buf = key(buf, 'p', i)
			if f.Test(buf) {
				fp++
			}
		}
		return float64(fp) / float64(*probes)
	}
	for _, b := range bpks {
		nf := float64(*n)
		// classic
		m := uint64(math.Round(b * nf))
		k := uint32(max(1, math.Round(b*math.Ln2)))
		f, err := bloom.NewWithConfig(bloom.Config{M: m, K: k})
		if err != nil {
			log.Fatal(err)
		}
		meas := measure(func(x []byte) { f.Add(x) }, f)
		th := math.Pow(1-math.Exp(-float64(k)*nf/float64(m)), float64(k))
		layouts[0].points = append(layouts[0].points, point{b, meas, th})
		// sbbf
		blocks := uint64(math.Ceil(b * nf / 256))
		s, err := bloom.NewSBBFWithConfig(bloom.SBBFConfig{Blocks: blocks})
		if err != nil {
			log.Fatal(err)
		}
		meas = measure(func(x []byte) { s.Add(x) }, s)
		layouts[1].points = append(layouts[1].points, point{256 * float64(blocks) / nf, meas, raw.SBBFFalsePositiveRate(blocks, *n)})
		// counting
		mc := uint64(math.Round(b / 4 * nf))
		kc := uint32(max(1, math.Round(b/4*math.Ln2)))
		c, err := bloom.NewCountingWithConfig(bloom.CountingConfig{M: mc, K: kc})
		if err != nil {
			log.Fatal(err)
		}
		meas = measure(func(x []byte) { c.Add(x) }, c)
		th = math.Pow(1-math.Exp(-float64(kc)*nf/float64(mc)), float64(kc))
		layouts[2].points = append(layouts[2].points, point{4 * float64(mc) / nf, meas, th})
		// stable
		ms := uint64(math.Round(b / 2 * nf))
		ks, dec, err := raw.StableSizing(ms, 2, math.Pow(1-math.Exp(-float64(k)*nf/float64(m)), float64(k)))
		if err != nil {
			log.Fatal(err)
		}
		st, err := bloom.NewStableWithConfig(bloom.StableConfig{M: ms, CellBits: 2, K: ks, Decrements: dec})
		if err != nil {
			log.Fatal(err)
		}
		meas = measure(func(x []byte) { st.Add(x) }, st)
		layouts[3].points = append(layouts[3].points, point{2 * float64(ms) / nf, meas, raw.StablePointFPR(st)})
		fmt.Fprintf(os.Stderr, "%4.1f bits/key: classic %.3g, sbbf %.3g, counting %.3g, stable %.3g\n", b,
			layouts[0].points[len(layouts[0].points)-1].measured,
			layouts[1].points[len(layouts[1].points)-1].measured,
			layouts[2].points[len(layouts[2].points)-1].measured,
			layouts[3].points[len(layouts[3].points)-1].measured)
	}
	for _, p0 := range []float64{0.3, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001, 5e-4, 2e-4, 1e-4} {
		sc, err := bloom.NewScalableWithConfig(bloom.ScalableConfig{Capacity: max(1, *n/8), ErrorRate: p0, Growth: 2, Tightening: 0.5})
		if err != nil {
			log.Fatal(err)
		}
		meas := measure(func(x []byte) {
			if err := sc.Add(x); err != nil {
				log.Fatal(err)
			}
		}, sc)
		bpk := 8 * float64(sc.Stats().Bytes) / float64(*n)
		layouts[4].points = append(layouts[4].points, point{bpk, meas, sc.Stats().FPR})
		fmt.Fprintf(os.Stderr, "scalable p0 %g: %d sub-filters, %.1f bits/key, measured %.3g\n", p0, raw.NumLinks(sc), bpk, meas)
	}
	svg := render(layouts, *n, *probes)
	if err := os.WriteFile(*out, []byte(svg), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "wrote %s\n", *out)
	// A table for docs, on stdout.
	fmt.Println("| bits/key | classic measured (theory) | sbbf measured (theory) | counting measured (theory) | stable measured (stable point) |")
	fmt.Println("|---:|---:|---:|---:|---:|")
	for i, b := range bpks {
		row := fmt.Sprintf("| %.0f |", b)
		for _, l := range layouts[:4] {
			p := l.points[i]
			row += fmt.Sprintf(" %.3g (%.3g) |", p.measured, p.theory)
		}
		fmt.Println(row)
	}
	fmt.Println()
	fmt.Println("| scalable: bits/key | measured (compound estimate) |")
	fmt.Println("|---:|---:|")
	for _, p := range layouts[4].points {
		fmt.Printf("| %.1f | %.3g (%.3g) |\n", p.bpk, p.measured, p.theory)
	}
}

// Plot geometry: x is bits per key (linear), y is the false-positive rate
// (log10).
const (
	width, height                  = 760, 500
	left, right, top, bottom       = 80, 200, 40, 60
	xMin, xMax                     = 4.0, 49.0
	yMinExp, yMaxExp               = -5, 0
	plotW                          = width - left - right
	plotH                          = height - top - bottom
	fontFamily                     = "font-family=\"Helvetica, Arial, sans-serif\""
	gridColor, axisColor, txtColor = "#dddddd", "#333333", "#222222"
)

func px(x float64) float64 { return left + (x-xMin)/(xMax-xMin)*plotW }

func py(y float64) float64 {
	ly := math.Log10(max(y, math.Pow(10, yMinExp)))
	return top + (yMaxExp-ly)/(yMaxExp-yMinExp)*plotH
}

func render(layouts []*layout, n, probes uint64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", width, height, width, height)
	fmt.Fprintf(&b, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>\n", width, height)
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"24\" %s font-size=\"16\" fill=\"%s\">False-positive rate against memory (n = %d keys, %d probes per point)</text>\n",
		left, fontFamily, txtColor, n, probes)
	// Grid and ticks.
	for e := yMinExp; e <= yMaxExp; e++ {
		y := py(math.Pow(10, float64(e)))
		fmt.Fprintf(&b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>\n", left, y, left+plotW, y, gridColor)
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"%.1f\" %s font-size=\"12\" text-anchor=\"end\" fill=\"%s\">1e%d</text>\n", left-8, y+4, fontFamily, txtColor, e)
		if e < yMaxExp {
			for m := 2; m < 10; m++ {
				ym := py(float64(m) * math.Pow(10, float64(e)))
				fmt.Fprintf(&b, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"0.5\"/>\n", left, ym, left+plotW, ym, "#f0f0f0")
			}
		}
	}
	for x := 4; x <= 48; x += 4 {
		xp := px(float64(x))
		fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"/>\n", xp, top, xp, top+plotH, gridColor)
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%d\" %s font-size=\"12\" text-anchor=\"middle\" fill=\"%s\">%d</text>\n", xp, top+plotH+18, fontFamily, txtColor, x)
	}
	fmt.Fprintf(&b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"%s\"/>\n", left, top, plotW, plotH, axisColor)
	fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%d\" %s font-size=\"13\" text-anchor=\"middle\" fill=\"%s\">memory, bits per key</text>\n", px((xMin+xMax)/2), height-18, fontFamily, txtColor)
	fmt.Fprintf(&b, "<text x=\"18\" y=\"%.1f\" %s font-size=\"13\" text-anchor=\"middle\" fill=\"%s\" transform=\"rotate(-90 18 %.1f)\">false-positive rate (log scale)</text>\n",
		float64(top+plotH/2), fontFamily, txtColor, float64(top+plotH/2))
	// Curves: theory dashed, measured solid with dots.
	for i, l := range layouts {
		var th, me []string
		for _, p := range l.points {
			if p.bpk > xMax || p.theory < math.Pow(10, yMinExp) {
				continue // below the plot
			}
			th = append(th, fmt.Sprintf("%.1f,%.1f", px(p.bpk), py(p.theory)))
			if p.theory*float64(probes) >= 20 && p.measured > 0 { // too few expected hits below this
				me = append(me, fmt.Sprintf("%.1f,%.1f", px(p.bpk), py(p.measured)))
			}
		}
		fmt.Fprintf(&b, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.2\" stroke-dasharray=\"5,4\"/>\n", strings.Join(th, " "), l.color)
		fmt.Fprintf(&b, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n", strings.Join(me, " "), l.color)
		for _, pt := range me {
			xy := strings.Split(pt, ",")
			fmt.Fprintf(&b, "<circle cx=\"%s\" cy=\"%s\" r=\"3\" fill=\"%s\"/>\n", xy[0], xy[1], l.color)
		}
		// Legend.
		ly := top + 20 + 26*i
		lx := left + plotW + 16
		fmt.Fprintf(&b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"/>\n", lx, ly, lx+24, ly, l.color)
		fmt.Fprintf(&b, "<circle cx=\"%d\" cy=\"%d\" r=\"3\" fill=\"%s\"/>\n", lx+12, ly, l.color)
		fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\" %s font-size=\"12\" fill=\"%s\">%s</text>\n", lx+30, ly+4, fontFamily, txtColor, l.name)
	}
	ly := top + 20 + 26*len(layouts)
	lx := left + plotW + 16
	fmt.Fprintf(&b, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"1.2\" stroke-dasharray=\"5,4\"/>\n", lx, ly, lx+24, ly, axisColor)
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\" %s font-size=\"12\" fill=\"%s\">theory</text>\n", lx+30, ly+4, fontFamily, txtColor)
	fmt.Fprintf(&b, "<text x=\"%d\" y=\"%d\" %s font-size=\"11\" fill=\"#666666\">generated by scripts/fpr-plot</text>\n", lx, top+plotH, fontFamily)
	b.WriteString("</svg>\n")
	return b.String()
}

// raw gives the theoretical rates package bloom computes but does not
// export (internal/bloomraw).
var raw = bloomraw.Get[bloomraw.Hooks[bloom.Filter, bloom.SBBF, bloom.Scalable, bloom.Stable, bloom.ScalableConfig]]()
