package harness

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// Command is what test/cmd/bench and test/cmd/chaos share: the results
// directory (-out), flags that name some of a list, the run until interrupted, and the report
// written at its end.
type Command struct {
	name    string
	out     *string
	started time.Time
}

// NewCommand defines the -out flag of test/cmd/<name>; call it before flag.Parse.
func NewCommand(name string) *Command {
	return &Command{name: name, out: flag.String("out", "", "results directory (default results/"+name+"-<UTC time>)")}
}

// Names splits value, a flag's comma-separated names of kind (scenario, fault), and checks that
// each is one of known; it exits 2, naming the known ones, when one is not. An empty value names
// none (nil).
func (c *Command) Names(kind, value string, known []string) []string {
	if value == "" {
		return nil
	}
	names := strings.Split(value, ",")
	for _, name := range names {
		if !slices.Contains(known, name) {
			fmt.Fprintf(os.Stderr, "%s: unknown %s %q; known: %s\n", c.name, kind, name, strings.Join(known, ", "))
			os.Exit(2)
		}
	}
	return names
}

// Run runs work with a context that an interrupt or SIGTERM cancels, and exits 1 with its error.
// Informers and core's code log through controller-runtime; the report is the output here, so
// those logs are discarded.
func (c *Command) Run(work func(context.Context) error) {
	c.started = time.Now()
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := work(ctx)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "\n%s: %v\n", c.name, err)
		os.Exit(1)
	}
}

// Started is when Run started.
func (c *Command) Started() time.Time { return c.started }

// Dir is the results directory: -out, or results/<name>-<UTC time Run started>.
func (c *Command) Dir() string {
	if *c.out != "" {
		return *c.out
	}
	return filepath.Join("results", c.name+"-"+c.started.UTC().Format("20060102T150405Z"))
}

// Line is the command line a report names: make runs the command with the flags it was given.
func (c *Command) Line() string {
	return strings.Join(append([]string{"go run ./test/cmd/" + c.name}, os.Args[1:]...), " ")
}

// WriteReport writes report.md and report.json into the results directory and prints the
// Markdown.
func (c *Command) WriteReport(report interface {
	Write(dir string) error
	Markdown() string
}) error {
	if err := report.Write(c.Dir()); err != nil {
		return err
	}
	fmt.Printf("\n%s\nReport written to %s (report.md, report.json)\n", report.Markdown(), strings.TrimSuffix(c.Dir(), "/"))
	return nil
}
