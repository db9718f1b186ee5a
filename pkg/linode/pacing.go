package linode

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/linode/linodego"
)

// pacingSlack is added to the window: the API counts a create when it arrives, a little after it
// left, so a create sent exactly one window after the oldest could still land in its window.
const pacingSlack = 100 * time.Millisecond

// createPacer holds Linode creates (POST /linode/instances) back so that no more than limit leave
// in any window. Linode's budget for them is 20 per 15 seconds per token; a launch of a hundred
// nodes sent at once spends two of every three calls on 429 answers, each retried by linodego
// after its Retry-After, and uses up a budget the token's other users share. Other requests pass
// straight through.
//
// It waits before each attempt linodego makes, retries included, and outside the HTTP client's
// timeout, which bounds the request once it leaves.
type createPacer struct {
	limit  int
	window time.Duration

	mu sync.Mutex
	// sent are the times the last creates left, at most limit, oldest first.
	sent []time.Time
}

func newCreatePacer(limit int, window time.Duration) *createPacer {
	return &createPacer{limit: limit, window: window + pacingSlack}
}

// beforeRequest is linodego's hook before each attempt; req.URL is still the endpoint's path. It
// never fails: linodego's retry conditions read the response of a failed hook, which is nil. A
// create whose context ends while it waits goes on and fails in the HTTP client, unsent.
func (p *createPacer) beforeRequest(req *linodego.Request) error {
	if req.Method == http.MethodPost && strings.HasSuffix(strings.TrimSuffix(req.URL, "/"), "linode/instances") {
		p.wait(req.Context())
	}
	return nil
}

// wait returns once a create may leave, having counted it, or when ctx ends.
func (p *createPacer) wait(ctx context.Context) {
	for {
		p.mu.Lock()
		now := time.Now()
		for len(p.sent) > 0 && now.Sub(p.sent[0]) >= p.window {
			p.sent = p.sent[1:]
		}
		if len(p.sent) < p.limit {
			p.sent = append(p.sent, now)
			p.mu.Unlock()
			return
		}
		delay := p.window - now.Sub(p.sent[0])
		p.mu.Unlock()
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
	}
}
