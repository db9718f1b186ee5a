package linode

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	clocktesting "k8s.io/utils/clock/testing"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// send takes a turn for a request of class and answers it at once.
func send(p *Pacer, ctx context.Context, class RouteClass) error {
	t, err := p.take(ctx, class)
	if err == nil {
		p.settle(t)
	}
	return err
}

// fixedWindowOverrun is the most turns any fixed window of the budget holds beyond its limit,
// whatever the window's start: Linode's windows start where the client cannot see.
func fixedWindowOverrun(turns []time.Time, budget Budget) int {
	worst := 0
	for _, start := range turns {
		n := 0
		for _, t := range turns {
			if !t.Before(start) && t.Before(start.Add(budget.Window)) {
				n++
			}
		}
		worst = max(worst, n-budget.Requests)
	}
	return worst
}

// TestBurstTurnsFitEveryFixedWindow: 60 creates asked at once take turns in three windows of
// 20, the fastest Linode's 20 per 15 s allows, and no fixed window of 15 s holds more than 20.
func TestBurstTurnsFitEveryFixedWindow(t *testing.T) {
	budget := Budget{Requests: 20, Window: 15 * time.Second}
	book := &turnBook{limit: budget.Requests, length: budget.Window + pacingSlack}
	var turns []time.Time
	for range 60 {
		turn := book.next(epoch)
		book.book(turn)
		turns = append(turns, turn)
	}
	if over := fixedWindowOverrun(turns, budget); over > 0 {
		t.Fatalf("a window of 15 s holds %d turns over the budget", over)
	}
	if last, floor := turns[59].Sub(epoch), 2*(budget.Window+pacingSlack); last != floor {
		t.Fatalf("the 60th create leaves %v after the burst, want %v (two windows)", last, floor)
	}
}

// TestRemainingCountsAnotherUserOfTheToken: the API says 17 of 20 creates are used while this
// client sent 2; the 3 left go now and the next waits for the API's window to reset.
func TestRemainingCountsAnotherUserOfTheToken(t *testing.T) {
	book := &turnBook{limit: 20, length: 15*time.Second + pacingSlack}
	book.book(epoch)
	book.book(epoch)
	now := epoch.Add(time.Second)
	book.observe(now, answer{status: http.StatusOK, limit: 20, remaining: 3, resetIn: 6 * time.Second}, true)
	for i := range 3 {
		if turn := book.next(now); !turn.Equal(now) {
			t.Fatalf("create %d of the 3 left waits until %v", i+1, turn.Sub(epoch))
		}
		book.book(now)
	}
	if turn := book.next(now); !turn.Equal(now.Add(6 * time.Second)) {
		t.Fatalf("a create over the API's count leaves %v after the first, want when the window resets (7 s)", turn.Sub(epoch))
	}
}

// TestRetryAfterStopsTheClass: a 429 with Retry-After 7 holds the class's next turn back 7 s.
func TestRetryAfterStopsTheClass(t *testing.T) {
	book := &turnBook{limit: 20, length: 15 * time.Second}
	book.pause(epoch, answer{status: http.StatusTooManyRequests, limit: 20, remaining: 0, retryAfter: 7 * time.Second})
	if turn := book.next(epoch); turn.Sub(epoch) != 7*time.Second {
		t.Fatalf("next turn after a 429 with Retry-After 7: in %v", turn.Sub(epoch))
	}
}

// TestHeadersOfTheSharedBudgetLeaveDedicatedBudgetsAlone: a pool create counts against every
// other request's budget, so its answer's headers say how much of that budget is left, not of
// a pool-create budget: the other budget takes them in, the pool-create one does not.
func TestHeadersOfTheSharedBudgetLeaveDedicatedBudgetsAlone(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	p := NewPacer(map[RouteClass]Budget{
		ClassPoolCreate: {Requests: 10, Window: time.Minute},
		ClassOther:      {Requests: 1600, Window: time.Minute},
	}, time.Minute, clk)
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}}
	resp.Header.Set("X-RateLimit-Limit", "1600")
	resp.Header.Set("X-RateLimit-Remaining", "0")
	p.observe(context.Background(), ClassPoolCreate, resp)
	if got := p.books[ClassPoolCreate]; got.limit != 10 || len(got.turns) != 0 {
		t.Fatalf("the pool-create budget took in the shared budget's headers: limit %d, %d turns", got.limit, len(got.turns))
	}
	if turn := p.books[ClassOther].next(epoch); !turn.After(epoch) {
		t.Fatal("the shared budget did not take in that none of it is left")
	}
}

// TestAListsOwnLimitLeavesTheListBudgetAlone: Linode allows 20 listings of images a minute, and
// says so on their answers; every other list keeps its budget of 200. A lower limit on a create's
// answer lowers the create budget: it is one operation's.
func TestAListsOwnLimitLeavesTheListBudgetAlone(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	p := NewPacer(DefaultBudgets(), time.Minute, clk)
	answer := func(limit, remaining string) *http.Response {
		resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}}
		resp.Header.Set("X-RateLimit-Limit", limit)
		resp.Header.Set("X-RateLimit-Remaining", remaining)
		return resp
	}
	p.observe(context.Background(), ClassList, answer("20", "0"))
	if got := p.books[ClassList]; got.limit != 200 || len(got.turns) != 0 {
		t.Fatalf("an images listing's answer left the list budget at %d, with %d turns", got.limit, len(got.turns))
	}
	p.observe(context.Background(), ClassLinodeCreate, answer("10", "9"))
	if got := p.books[ClassLinodeCreate].limit; got != 10 {
		t.Fatalf("Linode creates limited to 10 by the API: the book still allows %d", got)
	}
}

// TestTurnBeyondTheBoundIsNotBooked: a request whose turn comes after its bound fails at once
// with a TurnError and leaves the book as it was, so the requests after it keep their turns.
func TestTurnBeyondTheBoundIsNotBooked(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	p := NewPacer(map[RouteClass]Budget{ClassLinodeCreate: {Requests: 1, Window: time.Hour}}, time.Minute, clk)
	ctx := context.Background()
	if err := send(p, ctx, ClassLinodeCreate); err != nil {
		t.Fatal(err)
	}
	err := send(p, ctx, ClassLinodeCreate)
	var turn *TurnError
	if !errors.As(err, &turn) || turn.Class != ClassLinodeCreate || !turn.By.Equal(epoch.Add(time.Minute)) {
		t.Fatalf("second create within an hour's budget of one: %v, want a TurnError", err)
	}
	if n := len(p.books[ClassLinodeCreate].turns); n != 1 {
		t.Fatalf("%d turns booked, want only the first create's", n)
	}
	// A launch's own bound is the one that counts: a create whose launch's bound has passed is
	// not sent although a turn is free, and one whose launch may wait longer than the client's
	// bound books the turn an hour away.
	clk.Step(time.Hour + pacingSlack)
	launch := WithTurnBy(ctx, clk.Now().Add(-time.Second))
	if err := send(p, launch, ClassLinodeCreate); !IsNoTurn(err) {
		t.Fatalf("a create whose launch's bound has passed: %v, want a TurnError", err)
	}
	if err := send(p, ctx, ClassLinodeCreate); err != nil {
		t.Fatal(err)
	}
	patient := WithTurnBy(ctx, clk.Now().Add(2*time.Hour))
	booked := make(chan error)
	go func() { booked <- send(p, patient, ClassLinodeCreate) }()
	for !clk.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	clk.Step(time.Hour + pacingSlack)
	if err := <-booked; err != nil {
		t.Fatalf("a create whose launch may wait two hours, its turn one hour away: %v", err)
	}
	// The launch's other requests are not bound by it.
	if err := send(p, launch, ClassList); err != nil {
		t.Fatal(err)
	}
}

// TestDeletesShareTheOtherBudget: Linode charges deletes and pool writes to the budget of every
// other request, so they take turns there too.
func TestDeletesShareTheOtherBudget(t *testing.T) {
	clk := clocktesting.NewFakeClock(epoch)
	p := NewPacer(map[RouteClass]Budget{ClassOther: {Requests: 2, Window: time.Minute}}, time.Second, clk)
	ctx := context.Background()
	for _, class := range []RouteClass{ClassLinodeDelete, ClassPoolDelete} {
		if err := send(p, ctx, class); err != nil {
			t.Fatal(err)
		}
	}
	if err := send(p, ctx, ClassOther); !IsNoTurn(err) {
		t.Fatalf("a read after two deletes within a budget of two a minute: %v, want a TurnError", err)
	}
}

func TestClassOf(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		want         RouteClass
	}{
		{http.MethodPost, "/v4/linode/instances", ClassLinodeCreate},
		{http.MethodDelete, "/v4/linode/instances/12", ClassLinodeDelete},
		{http.MethodPost, "/v4beta/lke/clusters/3/pools", ClassPoolCreate},
		{http.MethodDelete, "/v4/lke/clusters/3/pools/9", ClassPoolDelete},
		{http.MethodDelete, "/v4/lke/clusters/3/nodes/3-9-ab", ClassPoolDelete},
		{http.MethodGet, "/v4/linode/instances", ClassList},
		{http.MethodGet, "/v4/linode/instances/12", ClassOther},
		{http.MethodPut, "/v4/lke/clusters/3/pools/9", ClassOther},
	} {
		if got := classOf(tc.method, tc.path); got != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.method, tc.path, got, tc.want)
		}
	}
}

func TestParseBudgets(t *testing.T) {
	budgets, err := ParseBudgets("lke_pool_create=10/1m, linode_create=0/15s")
	if err != nil {
		t.Fatal(err)
	}
	if got := budgets[ClassPoolCreate]; got != (Budget{Requests: 10, Window: time.Minute}) {
		t.Errorf("lke_pool_create = %v", got)
	}
	if _, paced := budgets[ClassLinodeCreate]; paced {
		t.Errorf("linode_create=0 still paces Linode creates")
	}
	if budgets[ClassOther] != DefaultBudgets()[ClassOther] {
		t.Errorf("a class not named lost its default: %v", budgets[ClassOther])
	}
	for _, bad := range []string{"creates=20/15s", "linode_create=20", "linode_create=x/15s", "linode_create=20/soon"} {
		if _, err := ParseBudgets(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestAColdBookWaitsForTheFirstAnswerOnly: until the first answer, a request waits for the one
// before it; a turn taken but never sent holds the others for a few seconds at most.
func TestAColdBookWaitsForTheFirstAnswerOnly(t *testing.T) {
	book := &turnBook{limit: 20, length: 15 * time.Second}
	first, second := book.book(epoch), book.book(epoch)
	if clear := book.clearance(second, epoch); !clear.After(epoch) {
		t.Fatal("the second request of a cold book left before the first was answered")
	}
	if clear := book.clearance(first, epoch); !clear.Equal(epoch) {
		t.Fatalf("the first request of a cold book waits until %v", clear.Sub(epoch))
	}
	if clear := book.clearance(second, epoch.Add(coldPatience)); !clear.Equal(epoch.Add(coldPatience)) {
		t.Fatalf("a first request unanswered for %v still holds the second until %v", coldPatience, clear.Sub(epoch))
	}
}

// TestATurnHeldButNeverUsedIsGivenBack: a create that holds its turn and fails before it leaves
// gives the turn back, so the next create, with a budget of one a second, goes at once.
func TestATurnHeldButNeverUsedIsGivenBack(t *testing.T) {
	p := NewPacer(map[RouteClass]Budget{ClassLinodeCreate: {Requests: 1, Window: time.Second}}, 0, clocktesting.NewFakeClock(epoch))
	ctx, err := p.hold(context.Background(), ClassLinodeCreate)
	if err != nil {
		t.Fatal(err)
	}
	p.release(ctx)
	if err := send(p, context.Background(), ClassLinodeCreate); err != nil {
		t.Fatalf("the next create waits for the turn given back: %v", err)
	}
}

// TestABadRateLimitHeaderStopsAClassTwoMinutesAtMost: a 429 whose Retry-After or
// X-RateLimit-Reset says years (a date sent as seconds, a broken clock) stops the class for
// MaxPause at most; one that is malformed, negative or past is ignored, and the class waits a
// window as after a 429 that says nothing. The client logs each header it does not believe once.
func TestABadRateLimitHeaderStopsAClassTwoMinutesAtMost(t *testing.T) {
	date := epoch.Format(http.TimeFormat)
	window := 15*time.Second + pacingSlack
	for _, tc := range []struct {
		name    string
		headers map[string]string
		want    time.Duration
	}{
		{"Retry-After in years", map[string]string{"Retry-After": "1767225600"}, MaxPause},
		{"Retry-After beyond int64", map[string]string{"Retry-After": "99999999999999999999"}, window},
		{"Retry-After as a far date", map[string]string{"Retry-After": "Fri, 01 Jan 2100 00:00:00 GMT", "Date": date}, MaxPause},
		{"X-RateLimit-Reset in years", map[string]string{"X-RateLimit-Reset": "4102444800", "Date": date}, MaxPause},
		{"X-RateLimit-Reset at the end of time", map[string]string{"X-RateLimit-Reset": "9223372036854775807", "Date": date}, MaxPause},
		{"Retry-After negative", map[string]string{"Retry-After": "-30"}, window},
		{"Retry-After malformed", map[string]string{"Retry-After": "soon"}, window},
		{"Retry-After as a past date", map[string]string{"Retry-After": "Thu, 01 Jan 2015 00:00:00 GMT", "Date": date}, window},
		{"X-RateLimit-Reset past", map[string]string{"X-RateLimit-Reset": "1420070400", "Date": date}, window},
		{"X-RateLimit-Reset without Date", map[string]string{"X-RateLimit-Reset": "4102444800"}, window},
		{"Retry-After believed", map[string]string{"Retry-After": "42"}, 42 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPacer(DefaultBudgets(), DefaultMaxTurnWait, clocktesting.NewFakeClock(epoch))
			var logged []string
			ctx := logr.NewContext(context.Background(), funcr.New(func(_, args string) { logged = append(logged, args) }, funcr.Options{}))
			for range 3 {
				resp := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{}}
				for name, value := range tc.headers {
					resp.Header.Set(name, value)
				}
				p.observe(ctx, ClassLinodeCreate, resp)
			}
			if got := p.books[ClassLinodeCreate].next(epoch).Sub(epoch); got != tc.want {
				t.Errorf("the class is stopped for %v, want %v", got, tc.want)
			}
			if believed := tc.want == 42*time.Second; believed != (len(logged) == 0) || len(logged) > 1 {
				t.Errorf("logged %d times: %q", len(logged), logged)
			}
		})
	}
}
