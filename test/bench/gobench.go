package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// hotPath is a Go benchmark of a path every provisioning round or every node takes.
type hotPath struct {
	pkg       string // relative to the module root
	benchmark string
	what      string
}

var hotPaths = []hotPath{
	{"./pkg/cloudprovider", "BenchmarkGetInstanceTypes", "GetInstanceTypes: NodeClass from an informer cache over kube-apiserver, warm catalogue"},
	{"./pkg/sizing", "BenchmarkInstanceTypes", "the sizing policy's answer for a NodePool with 500 pods pending and unchanged: pending pods read from an informer cache, grouped, found unchanged"},
	{"./pkg/sizing", "BenchmarkDecide", "a new ceiling for 1,000 pending pods of four sizes, one left for a later round"},
	{"./pkg/providers/instancetype", "BenchmarkList", "instance types of a NodeClass from the warm catalogue"},
	{"./pkg/providers/instancetype", "BenchmarkListCold", "instance types rebuilt after an offering ran out of capacity"},
	{"./pkg/providers/lke", "BenchmarkList", "List with 1,000 single-node pools in the cluster"},
	{"./pkg/providers/lke", "BenchmarkCreate", "Create against the Linode API emulator: pool create and read-back"},
	{"./pkg/webhooks/node", "BenchmarkAdmissionDecision", "the Node webhook's decision for one of our nodes"},
}

// GoBenchmarks are the hot paths' Go benchmarks, compiled into test binaries once (go test -c)
// and run one at a time, so that they do not compete for the cores. Compiling takes most of
// their time on a new machine and measures nothing, so Compile may run while the counted
// scenarios share the machine; Run compiles whatever is not compiled yet.
type GoBenchmarks struct {
	dir   string
	once  sync.Once
	root  string
	built map[string]string // package (relative to root) -> test binary
	err   error
}

// NewGoBenchmarks keeps the test binaries in dir.
func NewGoBenchmarks(dir string) *GoBenchmarks { return &GoBenchmarks{dir: dir} }

// Compile builds the test binary of every hot path's package with one go test -c, from the
// module root found from the working directory, with the environment's Go settings. Only the
// first call compiles; later ones return its error.
func (g *GoBenchmarks) Compile(ctx context.Context) error {
	g.once.Do(func() { g.root, g.built, g.err = compileTestBinaries(ctx, g.dir) })
	return g.err
}

// Run runs each hot path's benchmark and reports ns/op, with allocs/op and B/op in the note.
// Each row's command is the go test that reproduces it alone; quick shortens -benchtime for a
// smoke run.
func (g *GoBenchmarks) Run(ctx context.Context, quick bool) ([]Row, error) {
	if err := g.Compile(ctx); err != nil {
		return nil, err
	}
	var rows []Row
	for _, h := range hotPaths {
		cmd := exec.CommandContext(ctx, g.built[h.pkg], testBinaryArgs(h, quick)...)
		// go test runs a package's tests in its directory; testdata paths count on it.
		cmd.Dir = filepath.Join(g.root, h.pkg)
		output, err := cmd.CombinedOutput()
		command := "go " + shellJoin(benchmarkArgs(h, quick))
		if err != nil {
			return nil, fmt.Errorf("%s: %w\n%s", command, err, tail(string(output), 40))
		}
		results, err := parseBenchmarks(string(output))
		if err != nil {
			return nil, err
		}
		hotPathRows, err := benchmarkRows(h, results, command)
		if err != nil {
			return nil, err
		}
		rows = append(rows, hotPathRows...)
	}
	return rows, nil
}

// compileTestBinaries runs go test -c for the hot paths' packages, in parallel as one go
// command, and returns the module root and each package's binary.
func compileTestBinaries(ctx context.Context, dir string) (string, map[string]string, error) {
	root, err := moduleRoot(ctx)
	if err != nil {
		return "", nil, err
	}
	built := map[string]string{}
	packageOf := map[string]string{} // binary -> package
	args := []string{"test", "-c", "-o", dir + string(filepath.Separator)}
	for _, h := range hotPaths {
		if _, ok := built[h.pkg]; ok {
			continue
		}
		// With -o a directory, go test -c names each binary after its package's last element.
		binary := filepath.Join(dir, path.Base(h.pkg)+".test")
		if other, ok := packageOf[binary]; ok {
			return "", nil, fmt.Errorf("hot paths in %s and %s: their test binaries would both be %s", other, h.pkg, binary)
		}
		built[h.pkg], packageOf[binary] = binary, h.pkg
		args = append(args, h.pkg)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	if output, err := cmd.CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, tail(string(output), 40))
	}
	return root, built, nil
}

// benchmarkArgs are the go test arguments that run one benchmark, all its sub-benchmarks
// included. The pattern has no alternation: a "|" would also split the report's Markdown table.
func benchmarkArgs(h hotPath, quick bool) []string {
	args := []string{"test", "-run", "^$", "-bench", "^" + h.benchmark + "$", "-benchmem"}
	if quick {
		args = append(args, "-benchtime", "100ms")
	}
	return append(args, h.pkg)
}

// testBinaryArgs are benchmarkArgs for the test binary go test -c built: the same flags with the
// test. prefix, so that the go test command a row names reproduces it.
func testBinaryArgs(h hotPath, quick bool) []string {
	goTest := benchmarkArgs(h, quick)
	args := slices.Clone(goTest[1 : len(goTest)-1]) // without "test" and the package
	for i, arg := range args {
		if flag, ok := strings.CutPrefix(arg, "-"); ok {
			args[i] = "-test." + flag
		}
	}
	return args
}

func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding the module: go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("the Go benchmarks run from the repository: the working directory is not in a module")
	}
	return filepath.Dir(gomod), nil
}

// benchmarkResult is one line of go test -bench -benchmem output.
type benchmarkResult struct {
	// pkg is the import path the "pkg:" line above it named.
	pkg string
	// name is the benchmark with its sub-benchmarks, without the GOMAXPROCS suffix.
	name                          string
	nsPerOp, bytesPerOp, allocsOp float64
}

var (
	benchmarkLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)
	// go test writes a sub-benchmark's spaces as underscores; the report shows them as named.
	underscores = strings.NewReplacer("_", " ")
)

// parseBenchmarks reads go test -bench -benchmem output.
func parseBenchmarks(output string) ([]benchmarkResult, error) {
	var results []benchmarkResult
	pkg := ""
	scanner := bufio.NewScanner(strings.NewReader(output))
	for scanner.Scan() {
		line := scanner.Text()
		if rest, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(rest)
			continue
		}
		match := benchmarkLine.FindStringSubmatch(line)
		if match == nil {
			continue
		}
		result := benchmarkResult{pkg: pkg, name: underscores.Replace(match[1])}
		fields := strings.Fields(match[2])
		if len(fields)%2 != 0 {
			return nil, fmt.Errorf("benchmark line %q: values and units do not pair up", line)
		}
		measured := map[string]bool{}
		for i := 0; i < len(fields); i += 2 {
			value, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return nil, fmt.Errorf("benchmark line %q: %w", line, err)
			}
			switch fields[i+1] {
			case "ns/op":
				result.nsPerOp = value
			case "B/op":
				result.bytesPerOp = value
			case "allocs/op":
				result.allocsOp = value
			default:
				continue
			}
			measured[fields[i+1]] = true
		}
		if len(measured) != 3 {
			return nil, fmt.Errorf("benchmark line %q: want ns/op, B/op and allocs/op (-benchmem)", line)
		}
		results = append(results, result)
	}
	return results, scanner.Err()
}

// benchmarkRows makes a row of each result of the hot path's benchmark, and fails when there is
// none: a renamed benchmark must not drop out of the report unnoticed.
func benchmarkRows(h hotPath, results []benchmarkResult, command string) ([]Row, error) {
	var rows []Row
	for _, r := range results {
		if !strings.HasSuffix(r.pkg, strings.TrimPrefix(h.pkg, ".")) || (r.name != h.benchmark && !strings.HasPrefix(r.name, h.benchmark+"/")) {
			continue
		}
		rows = append(rows, Row{
			Scenario: "Go benchmarks",
			Metric:   strings.TrimPrefix(h.pkg, "./pkg/") + " " + r.name,
			Value:    r.nsPerOp,
			Unit:     "ns/op",
			Command:  command,
			Note:     fmt.Sprintf("%s allocs/op, %s B/op; %s", formatCount(r.allocsOp), formatCount(r.bytesPerOp), h.what),
		})
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no result for %s in %s", h.benchmark, h.pkg)
	}
	return rows, nil
}

func formatCount(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// shellJoin quotes the arguments that a shell would otherwise expand.
func shellJoin(args []string) string {
	quoted := make([]string, len(args))
	for i, arg := range args {
		if strings.ContainsAny(arg, "^$|()*? ") {
			arg = "'" + arg + "'"
		}
		quoted[i] = arg
	}
	return strings.Join(quoted, " ")
}

func tail(s string, lines int) string {
	all := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}
