package linode_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/linode/linodego"

	"github.com/linode/karpenter-provider-linode/pkg/emulator"
	"github.com/linode/karpenter-provider-linode/pkg/linode"
)

// TestCreatesWithinTheBudget launches ten Linodes at once against an emulator that allows three
// creates per 500 ms: paced to that budget, the client sends the creates in step with it;
// unpaced and without retries, the API refuses the seven over the budget. (The pacer counts a
// create when it leaves, the API when it arrives: on a busy machine one may arrive late enough to
// fall in the next window over its budget, hence one refusal allowed.)
func TestCreatesWithinTheBudget(t *testing.T) {
	const creates, budget, window = 10, 3, 500 * time.Millisecond
	for _, tc := range []struct {
		name    string
		paced   bool
		refused func(int) bool
	}{
		{name: "paced", paced: true, refused: func(n int) bool { return n <= 1 }},
		{name: "unpaced", refused: func(n int) bool { return n >= creates-budget }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			emu := emulator.New(emulator.WithDelayScale(0), emulator.WithRateLimits(emulator.RateLimits{LinodeCreates: budget, LinodeCreateWindow: window}))
			if err := emu.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = emu.Close() })
			options := linode.DefaultClientOptions()
			options.URL, options.Credentials, options.RetryCount = emu.URL(), linode.StaticCredentials(emulator.DefaultToken), 0
			options.CreatesPerWindow, options.CreateWindow = 0, 0
			if tc.paced {
				options.CreatesPerWindow, options.CreateWindow = budget, window
			}
			client, err := linode.NewClient(options)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for range creates {
				wg.Go(func() {
					_, _ = client.CreateInstance(context.Background(), linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-2"})
				})
			}
			wg.Wait()
			sent, refused := 0, 0
			for _, r := range emu.Requests() {
				if r.Route == "POST /linode/instances" {
					sent++
					if r.Status == http.StatusTooManyRequests {
						refused++
					}
				}
			}
			if sent != creates || !tc.refused(refused) {
				t.Fatalf("%d creates sent, %d refused with 429", sent, refused)
			}
		})
	}
}

// TestPacedCreateGivesUpWithItsContext: a create held back for the budget ends with its context.
func TestPacedCreateGivesUpWithItsContext(t *testing.T) {
	emu := emulator.New(emulator.WithDelayScale(0), emulator.WithoutRateLimits())
	if err := emu.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = emu.Close() })
	options := linode.DefaultClientOptions()
	options.URL, options.Credentials = emu.URL(), linode.StaticCredentials(emulator.DefaultToken)
	options.CreatesPerWindow, options.CreateWindow = 1, time.Hour
	client, err := linode.NewClient(options)
	if err != nil {
		t.Fatal(err)
	}
	create := linodego.InstanceCreateOptions{Region: "us-ord", Type: "g6-standard-2"}
	if _, err := client.CreateInstance(context.Background(), create); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := client.CreateInstance(ctx, create); err == nil || !strings.Contains(err.Error(), context.DeadlineExceeded.Error()) {
		t.Fatalf("a second create within the hour's budget of one: %v, want the context's deadline", err)
	}
	if n := emu.Counters()["POST /linode/instances"]; n != 1 {
		t.Fatalf("%d creates reached the API, want 1", n)
	}
	// Other requests are not held back.
	if _, err := client.ListInstances(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
}
