package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/linode/karpenter-provider-linode/pkg/planner"
	"github.com/linode/karpenter-provider-linode/pkg/test"
)

const (
	readmeNodePool = "../../examples/default.yaml"
	gpuNodePool    = "../../examples/gpu.yaml"
	workloads      = "../../examples/workloads"
)

// pod is a bare pod's manifest asking for cpu, with extra lines appended to its spec.
func pod(name, cpu string, spec ...string) string {
	return `apiVersion: v1
kind: Pod
metadata:
  name: ` + name + `
spec:
` + strings.Join(spec, "\n") + `
  containers:
    - name: c
      image: registry.k8s.io/pause:3.10
      resources:
        requests:
          cpu: "` + cpu + `"
`
}

// tinyNodePool allows standard plans up to 4 CPUs in all.
const tinyNodePool = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: tiny
spec:
  limits:
    cpu: "4"
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.linode, kind: LinodeNodeClass, name: default}
      requirements:
        - {key: karpenter.k8s.linode/instance-class, operator: In, values: [standard]}
---
apiVersion: karpenter.k8s.linode/v1
kind: LinodeNodeClass
metadata:
  name: default
`

// TestPlanInput: what the plan command answers for good and bad input, and the exit status that
// tells them apart: 0 every pod runs, 1 the input or the command line cannot be used, 2 some pods
// would not run, each named with its reason.
func TestPlanInput(t *testing.T) {
	// No kubeconfig names a cluster.
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECONFIG", "")
	for _, tc := range []struct {
		name string
		// files are written to a directory, by name; args refer to them by "@name".
		files map[string]string
		args  []string
		stdin string
		want  int
		// stdout and stderr are substrings the outputs must hold.
		stdout, stderr []string
	}{
		{
			name:   "the README's workloads run on the README's NodePool",
			args:   []string{"-f", readmeNodePool, "-f", workloads},
			want:   exitPlaced,
			stdout: []string{"default   g6-standard-", "20 pod(s)", "Lower bound", "Cheapest fleet of one plan per NodePool", "built-in snapshot (as of 2026-11-27"},
		},
		{
			name:   "an unknown kind is listed as skipped, with where it is",
			args:   []string{"-f", workloads + "/shop.yaml", "-f", readmeNodePool},
			want:   exitPlaced,
			stdout: []string{"Skipped (not workloads, NodePools or LinodeNodeClasses): Service shop/web (../../examples/workloads/shop.yaml:34)"},
		},
		{
			name:   "without a NodePool, the README's is planned for, and the plan says so",
			files:  map[string]string{"pod.yaml": pod("small", "500m")},
			args:   []string{"-f", "@pod.yaml"},
			want:   exitPlaced,
			stdout: []string{"Note: no NodePool given: planned for the README's NodePool and LinodeNodeClass (examples/default.yaml)", "default   g6-standard-1  1 "},
		},
		{
			name:   "manifests on standard input, helm template's way",
			args:   []string{"-f", "-", "-f", readmeNodePool},
			stdin:  "---\n# Source: chart/templates/a.yaml\n" + pod("a", "1") + "---\n# Source: chart/templates/empty.yaml\n---\n" + pod("b", "1"),
			want:   exitPlaced,
			stdout: []string{"2 pod(s)"},
		},
		{
			name:   "a malformed manifest is named by file and line",
			files:  map[string]string{"bad.yaml": pod("fine", "1") + "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n   labels: oops\n"},
			args:   []string{"-f", "@bad.yaml"},
			want:   exitError,
			stderr: []string{"bad.yaml:18: mapping values are not allowed in this context"},
		},
		{
			name:   "a manifest of the wrong shape is named by file and line",
			files:  map[string]string{"shape.yaml": "# a comment\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: three\n"},
			args:   []string{"-f", "@shape.yaml"},
			want:   exitError,
			stderr: []string{"shape.yaml:2: Deployment web:"},
		},
		{
			name:   "an object given twice is refused",
			args:   []string{"-f", readmeNodePool, "-f", "../../examples/instance.yaml"},
			want:   exitError,
			stderr: []string{"instance.yaml:7: LinodeNodeClass default is given twice, first at ../../examples/default.yaml:3"},
		},
		{
			name:   "a pod too big for every allowed plan",
			files:  map[string]string{"huge.yaml": pod("huge", "100")},
			args:   []string{"-f", "@huge.yaml", "-f", readmeNodePool},
			want:   exitUnplaceable,
			stdout: []string{"default/huge: too big for every allowed plan: it asks for 100 CPU; NodePool default's largest, g6-dedicated-64, has 63."},
		},
		{
			name:   "a pod no NodePool tolerates",
			files:  map[string]string{"plain.yaml": pod("plain", "1")},
			args:   []string{"-f", "@plain.yaml", "-f", gpuNodePool},
			want:   exitUnplaceable,
			stdout: []string{"default/plain: no NodePool tolerates it: gpu: did not tolerate taint (taint=nvidia.com/gpu:NoSchedule)"},
		},
		{
			name:   "a pod whose node requirements no allowed plan meets",
			files:  map[string]string{"picky.yaml": pod("picky", "1", "  nodeSelector: {karpenter.k8s.linode/instance-class: premium}")},
			args:   []string{"-f", "@picky.yaml", "-f", readmeNodePool},
			want:   exitUnplaceable,
			stdout: []string{"default/picky: no plan its NodePools allow matches its node requirements"},
		},
		{
			name: "a GPU pod where every GPU plan is sold out",
			files: map[string]string{"gpu.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      tolerations: [{key: nvidia.com/gpu, operator: Exists}]
      containers:
        - name: c
          image: registry.k8s.io/pause:3.10
          resources:
            limits:
              nvidia.com/gpu: "1"
`},
			args:   []string{"-f", "@gpu.yaml", "-f", gpuNodePool, "--region", "us-ord"},
			want:   exitUnplaceable,
			stdout: []string{"default/train-0: no plan that would hold it is available in the region: g1-gpu-rtx6000-1"},
		},
		{
			name:   "pods beyond the NodePool's limits",
			files:  map[string]string{"pools.yaml": tinyNodePool},
			args:   []string{"-f", "@pools.yaml", "-f", workloads + "/inflate.yaml"},
			want:   exitUnplaceable,
			stdout: []string{"tiny      g6-standard-4  1      3", "default/inflate-3: NodePool limits: NodePool tiny is limited to cpu 4", "default/inflate-4: NodePool limits"},
		},
		{
			name: "a NodePool whose pods no single plan holds has no one-plan fleet, and the report says so",
			files: map[string]string{
				"pods.yaml": pod("fast", "1", "  nodeSelector: {karpenter.k8s.linode/instance-class: dedicated}") + "---\n" +
					pod("big-memory", "1", "  nodeSelector: {karpenter.k8s.linode/instance-class: highmem}") + "---\n" + pod("plain", "1"),
				"pools.yaml": strings.Replace(strings.SplitN(tinyNodePool, "---", 2)[0], "  limits:", "  weight: 100\n  limits:", 1),
			},
			args:   []string{"-f", "@pods.yaml", "-f", "@pools.yaml", "-f", readmeNodePool},
			want:   exitPlaced,
			stdout: []string{"tiny      g6-standard-", "Cheapest fleet of one plan: none, no single plan holds every pod of some NodePool."},
		},
		{
			name:   "neither a manifest nor a cluster",
			args:   []string{"--region", "us-ord"},
			want:   exitError,
			stderr: []string{"usage: karpenter-linode plan [-f FILE_OR_DIR]...", "no manifests (-f) and no cluster: KUBECONFIG, ~/.kube/config and --kubeconfig name none"},
		},
		{
			name:   "YAML",
			args:   []string{"-f", readmeNodePool, "-f", workloads + "/inflate.yaml", "-o", "yaml"},
			want:   exitPlaced,
			stdout: []string{"nodePools:\n- ", "plan: g6-standard-"},
		},
		{
			name:   "an unknown output format",
			args:   []string{"-f", readmeNodePool, "--output", "xml"},
			want:   exitError,
			stderr: []string{`--output (-o) "xml" is not a format: use table, json or yaml`},
		},
		{
			name:   "a flag kubectl does not have either",
			args:   []string{"-f", readmeNodePool, "--kube-context", "prod"},
			want:   exitError,
			stderr: []string{"unknown flag: --kube-context"},
		},
		{
			name:   "a region the catalogue does not list",
			args:   []string{"-f", readmeNodePool, "--region", "mars-1"},
			want:   exitError,
			stderr: []string{`region "mars-1" is not in the catalogue`},
		},
		{
			name:   "a missing file",
			args:   []string{"-f", "no-such-file.yaml"},
			want:   exitError,
			stderr: []string{"no-such-file.yaml: no such file or directory"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			args := make([]string, len(tc.args))
			for i, arg := range tc.args {
				if name, ok := strings.CutPrefix(arg, "@"); ok {
					arg = filepath.Join(dir, name)
				}
				args[i] = arg
			}
			stdout, stderr, status := runPlan(t, args, tc.stdin)
			if status != tc.want {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", status, tc.want, stdout, stderr)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout)
				}
			}
			for _, want := range tc.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
		})
	}
}

// runPlan runs the plan command with no Linode token, as a user without an account does.
func runPlan(t *testing.T, args []string, stdin string) (stdout, stderr string, status int) {
	t.Helper()
	var out, errOut bytes.Buffer
	status = plan(context.Background(), args, strings.NewReader(stdin), &out, &errOut, func(string) string { return "" })
	return out.String(), errOut.String(), status
}

// TestPlanReadsTheCatalogueFromTheAPI: with LINODE_TOKEN the catalogue comes from the Linode API
// (here the emulator, at LINODE_URL), read today; a token the API refuses fails the plan without
// the token appearing in what it prints.
func TestPlanReadsTheCatalogueFromTheAPI(t *testing.T) {
	e := test.StartEmulatorForTest(t)
	run := func(token string) (string, string, int) {
		var out, errOut bytes.Buffer
		env := map[string]string{"LINODE_TOKEN": token, "LINODE_URL": e.URL()}
		status := plan(context.Background(), []string{"-f", readmeNodePool, "-f", workloads + "/inflate.yaml", "-o", "json"}, strings.NewReader(""), &out, &errOut,
			func(name string) string { return env[name] })
		return out.String(), errOut.String(), status
	}
	stdout, stderr, status := run(e.Token())
	if status != exitPlaced {
		t.Fatalf("exit status %d: %s", status, stderr)
	}
	var report planner.Report
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatal(err)
	}
	if report.Catalogue.Source != "the Linode API" || report.Catalogue.AgeDays != 0 || report.Pods != 5 {
		t.Fatalf("catalogue %+v, %d pods: want today's from the API, and inflate's 5 pods", report.Catalogue, report.Pods)
	}

	const wrong = "not-the-token-0123456789abcdef"
	stdout, stderr, status = run(wrong)
	if status != exitError || !strings.Contains(stderr, "Invalid Token") {
		t.Fatalf("exit status %d, stderr %q: want 1 and the API's refusal", status, stderr)
	}
	if strings.Contains(stdout+stderr, wrong) {
		t.Fatalf("the token is printed: %s%s", stdout, stderr)
	}
}

// TestPlanJSON: -o json holds the whole plan for scripts, the same as the table.
func TestPlanJSON(t *testing.T) {
	stdout, stderr, status := runPlan(t, []string{"-f", readmeNodePool, "-f", workloads, "-o", "json"}, "")
	if status != exitPlaced {
		t.Fatalf("exit status %d: %s", status, stderr)
	}
	var report planner.Report
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	if report.Pods != 20 || len(report.NodePools) != 1 || report.NodePools[0].NodePool != "default" {
		t.Fatalf("pods %d, NodePools %+v: want 20 pods on NodePool default", report.Pods, report.NodePools)
	}
	sum := 0.0
	for _, plan := range report.NodePools[0].Plans {
		sum += plan.Hourly
	}
	if report.Fleet.Hourly <= 0 || math.Abs(sum-report.Fleet.Hourly) > 1e-6 || report.LowerBound <= 0 || report.LowerBound > report.Fleet.Hourly ||
		report.OnePlan == nil || report.OnePlan.Hourly < report.LowerBound {
		t.Fatalf("fleet $%.3f/h (plans $%.3f/h), bound $%.3f/h, one plan %+v: want plans summing to the fleet, the bound at most the fleet and the one-plan fleet",
			report.Fleet.Hourly, sum, report.LowerBound, report.OnePlan)
	}
	if len(report.Skipped) != 1 || report.Catalogue.AsOf != "2026-11-27" || report.Catalogue.AgeDays < 0 {
		t.Fatalf("skipped %v, catalogue %+v", report.Skipped, report.Catalogue)
	}
}
