package emulator

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/linode/linodego"
)

// BenchmarkListAndGet measures list and get throughput over loopback with
// parallel keep-alive clients:
//
//	go test -run '^$' -bench ListAndGet ./pkg/emulator/
func BenchmarkListAndGet(b *testing.B) {
	e, c, clk := startEmulator(b)
	cluster, err := e.AddLKECluster("bench", "us-ord", "standard")
	if err != nil {
		b.Fatal(err)
	}
	for range 3 {
		if _, err := c.CreateLKENodePool(context.Background(), cluster, linodego.LKENodePoolCreateOptions{Count: 3, Type: "g6-standard-2"}); err != nil {
			b.Fatal(err)
		}
	}
	clk.Step(time.Hour)
	e.Tick()
	instanceID := e.Instances()[0].ID

	paths := []string{
		fmt.Sprintf("/v4/lke/clusters/%d/pools", cluster),
		"/v4/linode/instances",
		fmt.Sprintf("/v4/linode/instances/%d", instanceID),
		"/v4/linode/types/g6-standard-2",
		fmt.Sprintf("/v4/lke/clusters/%d", cluster),
		"/v4/regions",
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	var next atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("GET", e.URL()+paths[next.Add(1)%int64(len(paths))], nil)
			req.Header.Set("Authorization", "Bearer "+e.Token())
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
}
