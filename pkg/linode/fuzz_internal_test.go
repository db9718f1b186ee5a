package linode

import (
	"context"
	"net/http"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

// FuzzRateLimitHeaders: whatever an answer's rate-limit headers say, a wait read from them is
// between zero and MaxPause, a count is -1 (not believed) or more, and a 429 stops its class for
// MaxPause at most.
func FuzzRateLimitHeaders(f *testing.F) {
	date := epoch.Format(http.TimeFormat)
	f.Add("20", "17", "1", "1767225615", date)
	f.Add("1600", "0", "1767225600", "4102444800", date)
	f.Add("-1", "-5", "-30", "-9223372036854775808", "")
	f.Add("x", "", "Fri, 01 Jan 2100 00:00:00 GMT", "9223372036854775807", date)
	f.Add("200", "400", "Thu, 01 Jan 2015 00:00:00 GMT", "0", "Mon, 01 Jan 0001 00:00:00 GMT")
	f.Fuzz(func(t *testing.T, limit, remaining, retryAfter, reset, date string) {
		resp := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}}
		for name, value := range map[string]string{"X-RateLimit-Limit": limit, "X-RateLimit-Remaining": remaining,
			"Retry-After": retryAfter, "X-RateLimit-Reset": reset, "Date": date} {
			resp.Header.Set(name, value)
		}
		a, _ := readAnswer(resp)
		for name, wait := range map[string]time.Duration{"Retry-After": a.retryAfter, "X-RateLimit-Reset": a.resetIn} {
			if wait < 0 || wait > MaxPause {
				t.Fatalf("%s read as %v from %q", name, wait, resp.Header)
			}
		}
		if a.limit < -1 || a.remaining < -1 {
			t.Fatalf("counts read as limit %d, remaining %d from %q", a.limit, a.remaining, resp.Header)
		}
		p := NewPacer(DefaultBudgets(), DefaultMaxTurnWait, clocktesting.NewFakeClock(epoch))
		p.observe(context.Background(), ClassLinodeCreate, resp)
		if next := p.books[ClassLinodeCreate].next(epoch); next.Sub(epoch) > MaxPause {
			t.Fatalf("a 429 with %q stops creates for %v", resp.Header, next.Sub(epoch))
		}
	})
}
