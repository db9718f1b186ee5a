package bench

import (
	"strings"
	"testing"
)

const sampleBenchmarkOutput = `goos: linux
goarch: amd64
pkg: github.com/linode/karpenter-provider-linode/pkg/cloudprovider
cpu: AMD EPYC
BenchmarkGetInstanceTypes-2   	   50017	      2340 ns/op	    1224 B/op	       8 allocs/op
PASS
ok  	github.com/linode/karpenter-provider-linode/pkg/cloudprovider	9.114s
pkg: github.com/linode/karpenter-provider-linode/pkg/sizing
BenchmarkInstanceTypes-2   	    1344	    796023 ns/op	  696072 B/op	      60 allocs/op
BenchmarkDecide-2          	     546	   2063620 ns/op	  388068 B/op	    8552 allocs/op
PASS
pkg: github.com/linode/karpenter-provider-linode/pkg/providers/instancetype
BenchmarkList/default_kubelet-2         	 5000000	       212.5 ns/op	       0 B/op	       0 allocs/op
BenchmarkList/custom_kubelet-2          	 3000000	       401 ns/op	      16 B/op	       1 allocs/op
BenchmarkListCold-2                     	    2000	    512345 ns/op	  401234 B/op	    4321 allocs/op
PASS
ok  	github.com/linode/karpenter-provider-linode/pkg/providers/instancetype	3.2s
pkg: github.com/linode/karpenter-provider-linode/pkg/providers/lke
BenchmarkList/1000_pools,_listed_every_time-2         	      50	  23456789 ns/op	 9876543 B/op	   98765 allocs/op
    bench_test.go:25: a log line of the benchmark
BenchmarkList/1000_pools,_shared_listing-2            	  100000	     10234 ns/op	   81920 B/op	       1 allocs/op
BenchmarkCreate-2                                     	    1000	   1234567 ns/op	   45678 B/op	     567 allocs/op
PASS
pkg: github.com/linode/karpenter-provider-linode/pkg/webhooks/node
BenchmarkAdmissionDecision-2   	 1000000	      1050 ns/op	     720 B/op	      12 allocs/op
PASS
`

func TestParseBenchmarks(t *testing.T) {
	results, err := parseBenchmarks(sampleBenchmarkOutput)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 10 {
		t.Fatalf("%d results, want 10: %+v", len(results), results)
	}
	list := results[3]
	if list.pkg != "github.com/linode/karpenter-provider-linode/pkg/providers/instancetype" || list.name != "BenchmarkList/default kubelet" ||
		list.nsPerOp != 212.5 || list.bytesPerOp != 0 || list.allocsOp != 0 {
		t.Fatalf("fourth result = %+v", list)
	}
	shared := results[7]
	if shared.name != "BenchmarkList/1000 pools, shared listing" || shared.nsPerOp != 10234 || shared.bytesPerOp != 81920 || shared.allocsOp != 1 {
		t.Fatalf("eighth result = %+v", shared)
	}

	var rows []Row
	for _, h := range hotPaths {
		hotPathRows, err := benchmarkRows(h, results, "go test ...")
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, hotPathRows...)
	}
	if len(rows) != 10 {
		t.Fatalf("%d rows, want 10", len(rows))
	}
	create := rows[8]
	if create.Metric != "providers/lke BenchmarkCreate" || create.Value != 1234567 || create.Unit != "ns/op" ||
		!strings.HasPrefix(create.Note, "567 allocs/op, 45678 B/op; ") || create.Command != "go test ..." {
		t.Fatalf("Create row = %+v", create)
	}
	// BenchmarkList of the instance-type provider is not BenchmarkListCold, nor lke's List.
	if rows[3].Metric != "providers/instancetype BenchmarkList/default kubelet" || rows[5].Metric != "providers/instancetype BenchmarkListCold" {
		t.Fatalf("rows = %+v", rows)
	}
}

func TestParseBenchmarksWithoutBenchmem(t *testing.T) {
	if _, err := parseBenchmarks("BenchmarkCreate-2   	    1000	   1234567 ns/op\n"); err == nil {
		t.Fatal("a line without B/op and allocs/op was accepted")
	}
}

func TestBenchmarkRowsMissingHotPath(t *testing.T) {
	results, err := parseBenchmarks(strings.ReplaceAll(sampleBenchmarkOutput, "BenchmarkCreate-2", "BenchmarkCreateRenamed-2"))
	if err != nil {
		t.Fatal(err)
	}
	create := hotPath{"./pkg/providers/lke", "BenchmarkCreate", "Create"}
	if _, err := benchmarkRows(create, results, "go test ..."); err == nil || !strings.Contains(err.Error(), "BenchmarkCreate") {
		t.Fatalf("err = %v, want one naming BenchmarkCreate", err)
	}
}

func TestBenchmarkArgs(t *testing.T) {
	create := hotPath{"./pkg/providers/lke", "BenchmarkCreate", "Create"}
	if got, want := "go "+shellJoin(benchmarkArgs(create, true)), "go test -run '^$' -bench '^BenchmarkCreate$' -benchmem -benchtime 100ms ./pkg/providers/lke"; got != want {
		t.Fatalf("quick command\n%s\nwant\n%s", got, want)
	}
	if got, want := "go "+shellJoin(benchmarkArgs(create, false)), "go test -run '^$' -bench '^BenchmarkCreate$' -benchmem ./pkg/providers/lke"; got != want {
		t.Fatalf("command\n%s\nwant\n%s", got, want)
	}
}

func TestTestBinaryArgs(t *testing.T) {
	create := hotPath{"./pkg/providers/lke", "BenchmarkCreate", "Create"}
	for _, tt := range []struct {
		quick bool
		want  string
	}{
		{false, "-test.run ^$ -test.bench ^BenchmarkCreate$ -test.benchmem"},
		{true, "-test.run ^$ -test.bench ^BenchmarkCreate$ -test.benchmem -test.benchtime 100ms"},
	} {
		if got := strings.Join(testBinaryArgs(create, tt.quick), " "); got != tt.want {
			t.Errorf("quick=%v: test binary gets %q, want %q", tt.quick, got, tt.want)
		}
	}
}
