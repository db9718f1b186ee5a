package bench

import (
	"errors"
	"fmt"
	"image/color"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/linode/karpenter-provider-linode/pkg/planner"
	"github.com/linode/karpenter-provider-linode/test/harness"
)

// The files the day scenario writes beside the report.
const (
	dayTableFile = "day.md"
	dayPlotFile  = "day.png"
	daySVGFile   = "day.svg"
)

// writeDayFiles writes the side-by-side table and the plot (PNG and SVG) into dir.
func writeDayFiles(dir string, in *dayInput, days []dayFigures) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, dayTableFile), []byte(dayTable(in, days)), 0o644); err != nil {
		return err
	}
	width, height := 11*vg.Inch, 7*vg.Inch
	png := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(110))}
	svg := vgsvg.New(width, height)
	for _, canvas := range []struct {
		draw vg.CanvasWriterTo
		file string
	}{{png, dayPlotFile}, {svg, daySVGFile}} {
		if err := drawDay(canvas.draw, in, days); err != nil {
			return err
		}
		f, err := os.Create(filepath.Join(dir, canvas.file))
		if err != nil {
			return err
		}
		_, err = canvas.draw.WriteTo(f)
		if err := errors.Join(err, f.Close()); err != nil {
			return err
		}
	}
	return nil
}

// Colours of the plot's lines, one per provider, the bound and the plain pool in greys.
var dayColours = map[harness.Provider]color.Color{
	harness.Linode:         color.RGBA{R: 0x00, G: 0x8a, B: 0x3e, A: 0xff},
	harness.LinodeInstance: color.RGBA{R: 0x1f, G: 0x5f, B: 0xbf, A: 0xff},
	harness.Kwok:           color.RGBA{R: 0xd9, G: 0x5f, B: 0x02, A: 0xff},
}

// drawDay draws two panels sharing the day's hours: the fleets' $/h with the lower bound and the
// plain LKE pool, and the pods pending.
func drawDay(canvas vg.CanvasWriterTo, in *dayInput, days []dayFigures) error {
	cost := plot.New()
	cost.Title.Text = fmt.Sprintf("A day of the %q trace: what the fleet costs", in.trace.Name)
	cost.Y.Label.Text = "$/h"
	pending := plot.New()
	pending.Title.Text = "Pods pending"
	pending.Y.Label.Text = "pods"
	pending.X.Label.Text = "hour of the day"
	for _, p := range []*plot.Plot{cost, pending} {
		p.X.Min, p.X.Max = 0, 24
		p.X.Tick.Marker = hourTicks{}
		p.Y.Min = 0
		p.Add(plotter.NewGrid())
		p.Legend.Top = true
		p.Legend.Left = true
	}
	boundDrawn := false
	for _, f := range days {
		if f.provider == "" {
			line, err := dayLine(f.series.hours, f.series.fleet, color.Gray{Y: 0x70})
			if err != nil {
				return err
			}
			line.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
			cost.Add(line)
			cost.Legend.Add(fmt.Sprintf("plain LKE pool: %d× %s ($%.0f/day)", f.onePlan.Nodes, f.onePlan.Plan, f.cost), line)
			continue
		}
		if !boundDrawn {
			// The providers' bounds differ only by how their clusters' pods came and went; the
			// first is drawn.
			line, err := dayLine(f.series.hours, f.series.bound, color.Black)
			if err != nil {
				return err
			}
			line.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
			cost.Add(line)
			cost.Legend.Add(fmt.Sprintf("lower bound, whole nodes ($%.0f/day)", f.bound), line)
			boundDrawn = true
		}
		fleet, err := dayLine(f.series.hours, f.series.fleet, dayColours[f.provider])
		if err != nil {
			return err
		}
		cost.Add(fleet)
		cost.Legend.Add(fmt.Sprintf("%s ($%.0f/day, %.2f× its bound)", f.name, f.cost, f.ratio()), fleet)
		waiting, err := dayLine(f.series.hours, f.series.pending, dayColours[f.provider])
		if err != nil {
			return err
		}
		pending.Add(waiting)
		pending.Legend.Add(f.name, waiting)
	}
	tiles := draw.Tiles{Rows: 2, Cols: 1, PadY: 4 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	canvases := plot.Align([][]*plot.Plot{{cost}, {pending}}, tiles, draw.New(canvas))
	cost.Draw(canvases[0][0])
	pending.Draw(canvases[1][0])
	return nil
}

// dayLine is a step line through the samples: each sample holds until the next.
func dayLine(hours, values []float64, colour color.Color) (*plotter.Line, error) {
	points := make(plotter.XYs, len(hours))
	for i := range hours {
		points[i] = plotter.XY{X: hours[i], Y: values[i]}
	}
	line, err := plotter.NewLine(points)
	if err != nil {
		return nil, err
	}
	line.StepStyle = plotter.PostStep
	line.Color = colour
	line.Width = vg.Points(1.5)
	return line, nil
}

// hourTicks marks every three hours of the day.
type hourTicks struct{}

func (hourTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for h := 0; h <= 24; h++ {
		if float64(h) < lo || float64(h) > hi {
			continue
		}
		label := ""
		if h%3 == 0 {
			label = fmt.Sprintf("%02d:00", h)
		}
		ticks = append(ticks, plot.Tick{Value: float64(h), Label: label})
	}
	return ticks
}

// dayTable is the side-by-side table of the day: each provider, and the plain LKE pool.
func dayTable(in *dayInput, days []dayFigures) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# A day: the %q trace\n\n", in.trace.Name)
	b.WriteString("| |")
	for _, f := range days {
		fmt.Fprintf(&b, " %s |", f.name)
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat("---|", len(days)))
	b.WriteString("\n")
	line := func(what string, cell func(dayFigures) string) {
		fmt.Fprintf(&b, "| %s |", what)
		for _, f := range days {
			fmt.Fprintf(&b, " %s |", cell(f))
		}
		b.WriteString("\n")
	}
	line("day's cost", func(f dayFigures) string { return fmt.Sprintf("$%.2f", f.cost) })
	line("integral of the per-moment lower bound", func(f dayFigures) string { return fmt.Sprintf("$%.2f", f.bound) })
	line("cost ÷ bound", func(f dayFigures) string { return fmt.Sprintf("%.2f×", f.ratio()) })
	line("pods evicted or deleted by disruption per 1,000 pod-hours", func(f dayFigures) string {
		if f.provider == "" {
			return "0"
		}
		return fmt.Sprintf("%.1f (%d in %.0f pod-hours)", f.evictionsPer1000PodHours(), f.evictedTotal(), f.podHours)
	})
	line("node launches / deletions per hour", func(f dayFigures) string {
		return fmt.Sprintf("%.2f / %.2f", float64(f.launches)/Day.Hours(), float64(f.deletions)/Day.Hours())
	})
	line("plans launched", func(f dayFigures) string {
		if f.provider == "" {
			return fmt.Sprintf("%d× %s all day", f.onePlan.Nodes, f.onePlan.Plan)
		}
		return planner.FormatPlans(f.plans)
	})
	var workloads []string
	for _, f := range days {
		for w := range maps.Keys(f.pending) {
			if !slices.Contains(workloads, w) {
				workloads = append(workloads, w)
			}
		}
	}
	slices.Sort(workloads)
	for _, w := range workloads {
		line(w+": pending p50 / p95 (s)", func(f dayFigures) string {
			if f.provider == "" {
				return "—"
			}
			waits, ok := f.pending[w]
			if !ok {
				return "no pod created"
			}
			return fmt.Sprintf("%.1f / %.1f", waits.p50, waits.p95)
		})
	}
	fmt.Fprintf(&b, "\n![fleet $/h, lower bound and pending pods over the day](%s)\n", dayPlotFile)
	return b.String()
}
