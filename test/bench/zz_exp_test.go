package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linode/karpenter-provider-linode/pkg/localcluster"
)

func TestZZExperiment(t *testing.T) {
	ctx := context.Background()
	bin := filepath.Join(t.TempDir(), "controller")
	if err := localcluster.BuildController(ctx, bin); err != nil {
		t.Fatal(err)
	}
	cfg := Config{ControllerBinary: bin, Progress: func(s string) { fmt.Println(s) }}
	e, err := startEnv(ctx, cfg, Linode, 5*time.Second, func(o *localcluster.Options) { o.ControllerEnv = []string{"LOG_LEVEL=debug"} })
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = exec.Command("cp", e.cluster.ControllerLog(), "/tmp/zz-controller.log").Run()
		_ = e.stop()
	}()
	if err := e.createNodePool(ctx, "exp", 0); err != nil {
		t.Fatal(err)
	}
	n := 500
	if s := os.Getenv("ZZ_PODS"); s != "" {
		fmt.Sscan(s, &n)
	}
	start, _ := e.deploy(ctx, "exp", n)
	profDone := make(chan struct{})
	go func() {
		defer close(profDone)
		url := strings.Replace(e.cluster.ControllerMetricsURL(), "/metrics", "/debug/pprof/profile?seconds=25", 1)
		out, err := exec.Command("curl", "-s", "-o", "/tmp/zz-cpu.pprof", url).CombinedOutput()
		fmt.Println("profile:", string(out), err)
	}()
	if err := e.waitRunning(ctx, "exp", n, 5*time.Minute); err != nil {
		t.Fatal(err)
	}
	<-profDone
	fmt.Println("all running after", time.Since(start), "claims", len(e.watch.claimsOf("exp")))
}
