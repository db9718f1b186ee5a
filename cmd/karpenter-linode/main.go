// Command karpenter-linode is the provider's command-line tool. Its one command, plan, answers
// before anything is deployed what Karpenter would launch on Linode for a set of manifests or for
// a live cluster's workloads, and what it would cost (pkg/planner):
//
//	karpenter-linode plan -f FILE_OR_DIR... [--region REGION] [--catalogue FILE] [--kubeconfig FILE] [-o table|json]
//
// Installed as kubectl-linode_plan on the PATH it is also the kubectl plugin `kubectl linode-plan`,
// which runs plan. `karpenter-linode version` (or `kubectl linode-plan version`) prints the
// release version.
//
// Exit status: 0 when every pod would run, 1 for a usage error or a manifest, catalogue or cluster
// that cannot be read, 2 when the plan leaves some pods that would not run (listed with why).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/linode/karpenter-provider-linode/pkg/linode"
	"github.com/linode/karpenter-provider-linode/pkg/mode"
	"github.com/linode/karpenter-provider-linode/pkg/planner"
	"github.com/linode/karpenter-provider-linode/pkg/version"
)

// Exit statuses.
const (
	exitPlaced      = 0
	exitError       = 1
	exitUnplaceable = 2
)

// pluginName is the binary name under which kubectl runs the tool as `kubectl linode-plan`.
const pluginName = "kubectl-linode_plan"

func main() {
	// Core's scheduler and the sizing policy log through controller-runtime; the plan is the output.
	ctrllog.SetLogger(logr.Discard())
	args := os.Args[1:]
	if len(args) > 0 && (args[0] == "version" || args[0] == "--version") {
		fmt.Println(version.String("karpenter-linode"))
		os.Exit(exitPlaced)
	}
	if filepath.Base(os.Args[0]) != pluginName {
		if len(args) == 0 || args[0] != "plan" {
			fmt.Fprintln(os.Stderr, "usage: karpenter-linode plan -f FILE_OR_DIR... [--region REGION] [--catalogue FILE] [--kubeconfig FILE] [-o table|json]")
			os.Exit(exitError)
		}
		args = args[1:]
	}
	os.Exit(plan(context.Background(), args, os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// files is the repeatable -f flag.
type files []string

func (f *files) String() string     { return strings.Join(*f, ",") }
func (f *files) Set(v string) error { *f = append(*f, v); return nil }

// plan runs the plan command and returns its exit status.
func plan(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var paths files
	fs.Var(&paths, "f", "a manifest file or directory (.yaml, .yml, .json), or - for standard input; repeatable")
	region := fs.String("region", "us-ord", "the Linode region the fleet runs in; with --kubeconfig, by default the region of the cluster's nodes")
	catalogueFile := fs.String("catalogue", "", "a catalogue file (the API's regions, types and availability, as pkg/catalogue/catalogue.json); without it, the Linode API when LINODE_TOKEN is set, else the catalogue built into the binary (LINODE_URL changes the API's root, as for the controller)")
	kubeconfig := fs.String("kubeconfig", "", "plan for this cluster's pending and running pods, as if provisioned from nothing, beside what its nodes cost now")
	output := fs.String("o", "table", "output format: table or json")
	modeName := fs.String("mode", string(mode.LKE), "the controller's mode: lke or instance (instance mode also launches Nanodes)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: karpenter-linode plan -f FILE_OR_DIR... [--region REGION] [--catalogue FILE] [--kubeconfig FILE] [-o table|json]")
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "exit status: 0 every pod runs, 1 usage or input error, 2 some pods would not run")
	}
	if err := fs.Parse(args); err != nil {
		return exitError
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "karpenter-linode plan: %v\n", err)
		return exitError
	}
	switch {
	case fs.NArg() > 0:
		return fail(fmt.Errorf("unexpected argument %q: name manifests with -f", fs.Arg(0)))
	case len(paths) == 0 && *kubeconfig == "":
		fs.Usage()
		return exitError
	case *output != "table" && *output != "json":
		return fail(fmt.Errorf("-o %s: want table or json", *output))
	}
	m := mode.Mode(*modeName)
	if !slices.Contains(mode.All, m) {
		return fail(fmt.Errorf("--mode %s: want lke or instance", *modeName))
	}
	catalogue, err := loadCatalogue(ctx, *catalogueFile, getenv("LINODE_TOKEN"), getenv("LINODE_URL"))
	if err != nil {
		return fail(err)
	}
	in, err := planner.ReadManifests(paths, stdin)
	if err != nil {
		return fail(err)
	}
	var current *planner.CurrentFleet
	var notes []string
	if *kubeconfig != "" {
		live, err := readCluster(ctx, *kubeconfig)
		if err != nil {
			return fail(fmt.Errorf("reading the cluster: %w", err))
		}
		in.Merge(live.Manifests)
		if nodesRegion := live.region(); !flagSet(fs, "region") && nodesRegion != "" {
			*region = nodesRegion
			notes = append(notes, "the region is the cluster's nodes'")
		}
		priced := planner.PriceNodes(catalogue, *region, live.nodes)
		current = &priced
	}
	defaulted := in.Defaults()
	report, err := planner.Plan(ctx, planner.Settings{Region: *region, Mode: m, Catalogue: catalogue}, in.Workloads)
	if err != nil {
		return fail(err)
	}
	report.Current = current
	report.Skipped = in.Skipped
	report.Notes = notes
	if defaulted {
		report.Notes = append(report.Notes, "no NodePool given: planned for the README's NodePool and LinodeNodeClass ("+planner.DefaultNodePoolSource+")")
	}
	if *output == "json" {
		encoder := json.NewEncoder(stdout)
		encoder.SetIndent("", "  ")
		if err := encoder.Encode(report); err != nil {
			return fail(err)
		}
	} else {
		writeTable(stdout, report)
	}
	if len(report.Unplaceable) > 0 {
		return exitUnplaceable
	}
	return exitPlaced
}

// flagSet says whether the command line set the flag.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// loadCatalogue reads the catalogue file, else the Linode API with the token (at apiURL when it
// is not empty, as the controller's LINODE_URL), else takes the built-in one.
func loadCatalogue(ctx context.Context, file, token, apiURL string) (*planner.Catalogue, error) {
	switch {
	case file != "":
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		c, err := planner.ParseCatalogue(data)
		if err != nil {
			return nil, fmt.Errorf("catalogue %s: %w", file, err)
		}
		c.Source = file
		return c, nil
	case token != "":
		credentials := linode.StaticCredentials(token)
		options := linode.DefaultClientOptions()
		options.Credentials = credentials
		if apiURL != "" {
			options.URL = apiURL
		}
		api, err := linode.NewClient(options)
		if err != nil {
			return nil, err
		}
		api.SetLogger(quiet{})
		c, err := planner.ReadCatalogue(ctx, api)
		if err != nil {
			return nil, errors.New(credentials.Redact(err.Error()))
		}
		return c, nil
	default:
		return planner.BuiltInCatalogue()
	}
}

// quiet drops linodego's own log lines: the plan command prints the error the call returns.
type quiet struct{}

func (quiet) Errorf(string, ...any) {}
func (quiet) Warnf(string, ...any)  {}
func (quiet) Debugf(string, ...any) {}
