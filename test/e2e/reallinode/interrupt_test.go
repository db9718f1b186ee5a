package reallinode

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
)

// Set in the environment of the process TestAnInterruptedRunDeletesWhatItMade interrupts: the
// emulator's address and token, and the line the process prints once its cluster exists.
const (
	interruptedURLEnv   = "REALLINODE_INTERRUPTED_RUN_URL"
	interruptedTokenEnv = "REALLINODE_INTERRUPTED_RUN_TOKEN"
	clusterCreatedLine  = "interrupted run: cluster created"
)

func TestAnInterruptedRunDeletesWhatItMade(t *testing.T) {
	for _, signal := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(signal.String(), func(t *testing.T) {
			e, cfg, _ := account(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			run := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestInterruptedRun$", "-test.v")
			run.Env = append(os.Environ(), interruptedURLEnv+"="+cfg.URL, interruptedTokenEnv+"="+e.Token())
			stdout, err := run.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			run.Stderr = run.Stdout
			if err := run.Start(); err != nil {
				t.Fatal(err)
			}
			var output strings.Builder
			lines := bufio.NewScanner(io.TeeReader(stdout, &output))
			for lines.Scan() && !strings.Contains(lines.Text(), clusterCreatedLine) {
			}
			if clusters := clusterLabels(t, NewLinodeClient(cfg, "v4beta")); len(clusters) != 1 {
				t.Fatalf("the run's cluster before the %s: %v\n%s", signal, clusters, output.String())
			}

			if err := run.Process.Signal(signal); err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, io.TeeReader(stdout, &output))
			if err := run.Wait(); err == nil {
				t.Errorf("an interrupted run exits non-zero")
			}
			if clusters := clusterLabels(t, NewLinodeClient(cfg, "v4beta")); len(clusters) != 0 {
				t.Errorf("clusters left after the %s: %v\n%s", signal, clusters, output.String())
			}
			for _, want := range []string{"deleted: LKE cluster", "Cost of this run"} {
				if !strings.Contains(output.String(), want) {
					t.Errorf("the interrupted run does not say %q:\n%s", want, output.String())
				}
			}
		})
	}
}

// TestInterruptedRun is the run TestAnInterruptedRunDeletesWhatItMade interrupts, in a process of
// its own: a Ginkgo suite with the real suite's clean-up (RegisterCleanup), whose one spec creates
// the run's cluster in the emulator and waits to be interrupted. Run directly, it has nothing to
// do and returns.
func TestInterruptedRun(t *testing.T) {
	url, token := os.Getenv(interruptedURLEnv), os.Getenv(interruptedTokenEnv)
	if url == "" {
		return
	}
	cfg, err := LoadConfig(environment(map[string]string{"LINODE_TOKEN": token, "LINODE_URL": url}))
	if err != nil {
		t.Fatal(err)
	}
	run, err := NewRun(context.Background(), cfg, t.TempDir(), os.Stdout, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	run.RegisterCleanup()
	ginkgo.It("waits, with its cluster, to be interrupted", func(ctx ginkgo.SpecContext) {
		cluster, err := CreateCluster(ctx, NewLinodeClient(cfg, APIVersion(TierStandard)), cfg.Region, TierStandard, run.Tag, time.Now())
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		run.clusters = append(run.clusters, cluster)
		fmt.Println(clusterCreatedLine)
		<-ctx.Done()
	})
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "an interrupted run")
}
