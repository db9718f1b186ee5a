// Command karpenter-linode is the provider's command-line tool. Its one command, plan, answers
// before anything is deployed what Karpenter would launch on Linode for a set of manifests or for
// a live cluster's workloads, and what it would cost (pkg/planner):
//
//	karpenter-linode plan [-f FILE_OR_DIR]... [--region REGION] [--mode lke|instance] [--catalogue FILE]
//	    [--kubeconfig FILE] [--context NAME] [-n NAMESPACE] [-o table|json|yaml]
//
// Installed as kubectl-linode_plan on the PATH it is also the kubectl plugin `kubectl linode-plan`,
// which runs plan. It takes kubectl's own connection flags (k8s.io/cli-runtime) and reads
// KUBECONFIG as kubectl does: without -f it plans for the current context's cluster.
// `karpenter-linode version` (or `kubectl linode-plan version`) prints the release version.
//
// Exit status: 0 when every pod would run, 1 for a usage error or a manifest, catalogue or cluster
// that cannot be read, 2 when the plan leaves some pods that would not run (listed with why).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	sigsyaml "sigs.k8s.io/yaml"

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

const usage = "usage: karpenter-linode plan [-f FILE_OR_DIR]... [--region REGION] [--mode lke|instance] [--catalogue FILE] [--kubeconfig FILE] [--context NAME] [-n NAMESPACE] [-o table|json|yaml]"

// ownFlags are the plan command's flags; every other flag is kubectl's, and names a cluster.
var ownFlags = []string{"filename", "region", "catalogue", "output", "mode"}

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
			fmt.Fprintln(os.Stderr, usage)
			os.Exit(exitError)
		}
		args = args[1:]
	}
	os.Exit(plan(context.Background(), args, os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// plan runs the plan command and returns its exit status.
func plan(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := pflag.NewFlagSet("plan", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	paths := fs.StringArrayP("filename", "f", nil, "a manifest file or directory (.yaml, .yml, .json), or - for standard input; repeatable. Without it, the cluster's pods are planned for")
	region := fs.String("region", "us-ord", "the Linode region the fleet runs in; for a cluster, by default the region of its nodes")
	catalogueFile := fs.String("catalogue", "", "a catalogue file (the API's regions, types and availability, as pkg/catalogue/catalogue.json); without it, the Linode API when LINODE_TOKEN is set, else the catalogue built into the binary (LINODE_URL changes the API's root, as for the controller)")
	output := fs.StringP("output", "o", "table", "output format: table, json or yaml")
	modeName := fs.String("mode", string(mode.LKE), "the controller's mode: lke or instance (instance mode also launches Nanodes)")
	// kubectl's flags, KUBECONFIG and ~/.kube/config, as kubectl reads them. A cluster is read
	// when no manifest is given or one of these flags names it: -n plans for that namespace's
	// pods; the plan is for the whole cluster otherwise, as Karpenter provisions for all of it.
	kubeFlags := genericclioptions.NewConfigFlags(false)
	kubeFlags.AddFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, usage)
		fs.PrintDefaults()
		fmt.Fprintln(stderr, "exit status: 0 every pod runs, 1 usage or input error, 2 some pods would not run")
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "karpenter-linode plan: %v\n", err)
		return exitError
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitPlaced
		}
		fmt.Fprintln(stderr, usage)
		return fail(err)
	}
	namesCluster := false
	fs.Visit(func(f *pflag.Flag) { namesCluster = namesCluster || !slices.Contains(ownFlags, f.Name) })
	readsCluster := len(*paths) == 0 || namesCluster
	switch {
	case fs.NArg() > 0:
		return fail(fmt.Errorf("unexpected argument %q: name manifests with -f", fs.Arg(0)))
	case !slices.Contains([]string{"table", "json", "yaml"}, *output):
		return fail(fmt.Errorf("--output (-o) %q is not a format: use table, json or yaml", *output))
	case len(*paths) == 0 && namesNoCluster(fs, kubeFlags):
		fs.Usage()
		return fail(errors.New("no manifests (-f) and no cluster: KUBECONFIG, ~/.kube/config and --kubeconfig name none"))
	}
	m := mode.Mode(*modeName)
	if !slices.Contains(mode.All, m) {
		return fail(fmt.Errorf("--mode %s: want lke or instance", *modeName))
	}
	catalogue, err := loadCatalogue(ctx, *catalogueFile, getenv("LINODE_TOKEN"), getenv("LINODE_URL"))
	if err != nil {
		return fail(err)
	}
	in, err := planner.ReadManifests(*paths, stdin)
	if err != nil {
		return fail(err)
	}
	var current *planner.CurrentFleet
	var notes []string
	if readsCluster {
		config, err := kubeFlags.ToRESTConfig()
		if err != nil {
			return fail(fmt.Errorf("reading the cluster: %w", err))
		}
		namespace := ""
		if fs.Changed("namespace") {
			namespace = *kubeFlags.Namespace
		}
		live, err := readCluster(ctx, config, namespace)
		if err != nil {
			return fail(fmt.Errorf("reading the cluster at %s: %w", config.Host, err))
		}
		notes = append(notes, "the pods are those of the cluster at "+config.Host+inNamespace(namespace))
		in.Merge(live.Manifests)
		if nodesRegion := live.region(); !fs.Changed("region") && nodesRegion != "" {
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
	switch *output {
	case "json":
		encoder := json.NewEncoder(stdout)
		encoder.SetIndent("", "  ")
		if err := encoder.Encode(report); err != nil {
			return fail(err)
		}
	case "yaml":
		data, err := sigsyaml.Marshal(report)
		if err != nil {
			return fail(err)
		}
		if _, err := stdout.Write(data); err != nil {
			return fail(err)
		}
	default:
		writeTable(stdout, report)
	}
	if len(report.Unplaceable) > 0 {
		return exitUnplaceable
	}
	return exitPlaced
}

// namesNoCluster says whether no kubeconfig file nor flag names a cluster and the command does not
// run in a pod, where kubectl would try localhost:8080.
func namesNoCluster(fs *pflag.FlagSet, kubeFlags *genericclioptions.ConfigFlags) bool {
	raw, err := kubeFlags.ToRawKubeConfigLoader().RawConfig()
	if err != nil || len(raw.Clusters) > 0 || fs.Changed("server") {
		return false
	}
	_, err = rest.InClusterConfig()
	return err != nil
}

// inNamespace names the namespace the pods were read from, if only one.
func inNamespace(namespace string) string {
	if namespace == "" {
		return ""
	}
	return ", namespace " + namespace
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
