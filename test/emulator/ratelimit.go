package emulator

import (
	"net/http"
	"strconv"
	"time"
)

// Rate limit classes, after Linode's published limits.
const (
	classPaginated    = "paginated"
	classOther        = "other"
	classLinodeCreate = "linode-create"
	classPoolCreate   = "lke-pool-create"
)

type windowKey struct {
	token string
	class string
}

// window is a fixed rate limit window: count requests since start.
type window struct {
	start time.Time
	count int
}

// rateLimiter enforces per-token budgets over fixed windows on the
// emulator's clock, so a fake clock controls when budgets refill.
type rateLimiter struct {
	guard
	limits  RateLimits
	windows map[windowKey]*window
}

func newRateLimiter(l RateLimits) *rateLimiter {
	return &rateLimiter{limits: l, windows: map[windowKey]*window{}}
}

func (l *rateLimiter) budget(rt route) (class string, limit int, length time.Duration) {
	switch {
	case rt.method == http.MethodPost && rt.path == "/linode/instances":
		return classLinodeCreate, l.limits.LinodeCreates, l.limits.LinodeCreateWindow
	case rt.method == http.MethodPost && rt.path == "/lke/clusters/{clusterId}/pools" && l.limits.LKEPoolCreates > 0:
		return classPoolCreate, l.limits.LKEPoolCreates, l.limits.LKEPoolCreateWindow
	case rt.paginated:
		return classPaginated, l.limits.ListsPerMinute, time.Minute
	default:
		return classOther, l.limits.OtherPerMinute, time.Minute
	}
}

// admit counts a request against its budget and sets the X-RateLimit-*
// headers. Over budget it answers 429 with Retry-After.
func (l *rateLimiter) admit(h http.Header, token string, rt route, now time.Time) *apiError {
	class, limit, length := l.budget(rt)
	if limit <= 0 || length <= 0 {
		return nil
	}
	var err *apiError
	l.do(func() { err = l.count(h, windowKey{token, class}, limit, length, now) })
	return err
}

func (l *rateLimiter) count(h http.Header, key windowKey, limit int, length time.Duration, now time.Time) *apiError {
	w, ok := l.windows[key]
	if !ok || !now.Before(w.start.Add(length)) {
		w = &window{start: now}
		l.windows[key] = w
	}
	reset := w.start.Add(length)
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	if w.count >= limit {
		h.Set("X-RateLimit-Remaining", "0")
		wait := int(reset.Sub(now).Seconds() + 0.999)
		h.Set("Retry-After", strconv.Itoa(max(1, wait)))
		return errStatus(http.StatusTooManyRequests, "Too Many Requests")
	}
	w.count++
	h.Set("X-RateLimit-Remaining", strconv.Itoa(limit-w.count))
	return nil
}
