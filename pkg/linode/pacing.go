package linode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// RouteClass is a group of requests the client paces together: one of Linode's rate limits, or
// a kind of write a burst of launches or deletes makes many of at once.
type RouteClass string

const (
	// ClassLinodeCreate is POST /linode/instances, which Linode limits to 20 per 15 s per token.
	ClassLinodeCreate RouteClass = "linode_create"
	// ClassLinodeDelete is DELETE /linode/instances/{id}.
	ClassLinodeDelete RouteClass = "linode_delete"
	// ClassPoolCreate is POST /lke/clusters/{id}/pools.
	ClassPoolCreate RouteClass = "lke_pool_create"
	// ClassPoolDelete is the delete of a pool or of one node of a pool.
	ClassPoolDelete RouteClass = "lke_pool_delete"
	// ClassList is a paginated GET (a collection), which Linode limits to 200 a minute.
	ClassList RouteClass = "list"
	// ClassOther is every other request, which Linode limits to 1600 a minute.
	ClassOther RouteClass = "other"
)

// RouteClasses are every class, in the order the metrics list them.
var RouteClasses = []RouteClass{ClassLinodeCreate, ClassLinodeDelete, ClassPoolCreate, ClassPoolDelete, ClassList, ClassOther}

// Budget is at most Requests in any Window.
type Budget struct {
	Requests int
	Window   time.Duration
}

func (b Budget) String() string { return fmt.Sprintf("%d/%v", b.Requests, b.Window) }

// DefaultBudgets are Linode's published limits per token. Linode publishes none of its own for
// deletes of Linodes, nor for creates or deletes of LKE pools: they count against the budget of
// every other request, and a budget set for one of them caps it on top of that.
func DefaultBudgets() map[RouteClass]Budget {
	return map[RouteClass]Budget{
		ClassLinodeCreate: {Requests: 20, Window: 15 * time.Second},
		ClassList:         {Requests: 200, Window: time.Minute},
		ClassOther:        {Requests: 1600, Window: time.Minute},
	}
}

// DefaultMaxTurnWait bounds the wait for a turn of a request but a launch's create, whose bound
// is the launch's own (WithTurnBy: core deletes a NodeClaim that has not launched 5 minutes after
// it was created). Any other request waiting longer than this is better failed and retried by its
// controller.
const DefaultMaxTurnWait = 2 * time.Minute

// pacingSlack is added to each window for what two clocks cannot order: a request sent the
// instant a window ends, by our clock, may still be counted in it by the API's. Requests answered
// count from their answers and those in flight from the present (see turn), so the slack need not
// cover the trip.
const pacingSlack = 10 * time.Millisecond

// Pacer gives each request a turn within its class's budgets, so that a burst of any size is sent
// no faster than Linode accepts it instead of answered with 429s and retried: one create call per
// node. Turns are booked in order of asking over sliding windows: Linode counts over fixed
// windows whose start the client cannot see, and a request at most Requests per Window of any
// sliding window fits any fixed one. (A token bucket either overruns a fixed window by its burst
// or runs below the limit by as much.) Each request counts in the windows from its answer, the
// latest the API can have counted it, and a request checks the windows again when its turn comes:
// answers slowed by load delay the turns after them instead of turning them into 429s. The API's
// X-RateLimit-* answers correct the books: a 429 stops the class until its Retry-After, and fewer
// requests remaining than the client counted (another user of the token) fill the window.
//
// A Pacer is safe for concurrent use; share one among the clients of a token.
type Pacer struct {
	clock   clock.Clock
	maxWait time.Duration

	mu    sync.Mutex
	books map[RouteClass]*turnBook
	// doubted are the rate-limit headers whose disbelief was logged.
	doubted map[string]bool
}

// NewPacer paces the classes that have a budget; the others pass as they come.
func NewPacer(budgets map[RouteClass]Budget, maxWait time.Duration, clk clock.Clock) *Pacer {
	p := &Pacer{clock: clk, maxWait: maxWait, books: map[RouteClass]*turnBook{}, doubted: map[string]bool{}}
	for class, budget := range budgets {
		if budget.Requests > 0 && budget.Window > 0 {
			p.books[class] = &turnBook{limit: budget.Requests, length: budget.Window + pacingSlack}
		}
	}
	return p
}

// TurnError is a request not sent because its turn in its class's budget comes later than it may
// wait. The request never left: retrying it later cannot make a second Linode or pool.
type TurnError struct {
	Class RouteClass
	// In is how far off the turn was.
	In time.Duration
	// By is the latest the request could leave.
	By time.Time
	// Pace is the time the class's budget gives each request (its window over its limit): how
	// much later the turn of each request asking after this one comes.
	Pace time.Duration
}

func (e *TurnError) Error() string {
	return fmt.Sprintf("not sent: its turn in the Linode API's rate limit for %s comes in %v, later than it may leave (%s)",
		e.Class, e.In.Round(time.Second), e.By.UTC().Format(time.RFC3339))
}

// IsNoTurn reports whether err is a request the client did not send for want of a turn.
func IsNoTurn(err error) bool {
	var turn *TurnError
	return errors.As(err, &turn)
}

type turnByKey struct{}

// WithTurnBy bounds the wait for a turn of the creates (of Linodes and LKE pools) the context
// makes, in place of the client's MaxTurnWait: one whose turn comes after t is not sent
// (TurnError). The context's other requests, such as the listing a launch reads first, wait as
// usual.
func WithTurnBy(ctx context.Context, t time.Time) context.Context {
	return context.WithValue(ctx, turnByKey{}, t)
}

// heldTurn is a turn taken before linodego's first attempt; the transport lets that attempt go
// without another, and paces linodego's retries.
type heldTurn struct {
	class  RouteClass
	ticket ticket
	used   atomic.Bool
}

type heldTurnKey struct{}

// hold takes a turn for one call of class and marks the context with it. It returns a TurnError
// when the turn is too far off.
func (p *Pacer) hold(ctx context.Context, class RouteClass) (context.Context, error) {
	t, err := p.take(ctx, class)
	if err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, heldTurnKey{}, &heldTurn{class: class, ticket: t}), nil
}

// takeForAttempt takes a turn for one HTTP attempt, unless the call already holds one for it.
func (p *Pacer) takeForAttempt(ctx context.Context, class RouteClass) (ticket, error) {
	if held, ok := ctx.Value(heldTurnKey{}).(*heldTurn); ok && held.class == class && held.used.CompareAndSwap(false, true) {
		return held.ticket, nil
	}
	return p.take(ctx, class)
}

// release gives back the turn ctx holds if the call never made its first attempt (it failed
// before it left): unanswered, the turn would keep its place in the book's windows.
func (p *Pacer) release(ctx context.Context) {
	if held, ok := ctx.Value(heldTurnKey{}).(*heldTurn); ok && held.used.CompareAndSwap(false, true) {
		p.cancel(held.ticket)
	}
}

// ticket is the turns one request holds, one in each book of its class's chain.
type ticket []booking

type booking struct {
	book *turnBook
	turn *turn
}

// take waits for a turn of class and books it, or returns a TurnError when the turn comes after
// the request's bound, or the context's error when it ends first.
func (p *Pacer) take(ctx context.Context, class RouteClass) (ticket, error) {
	start := p.clock.Now()
	latest := p.latest(ctx, class, start)
	p.mu.Lock()
	now := p.clock.Now()
	books := p.chain(class)
	if len(books) == 0 {
		p.mu.Unlock()
		return nil, nil
	}
	at := now
	for _, b := range books {
		at = latestOf(at, b.next(now))
	}
	if at.After(latest) {
		defer p.mu.Unlock()
		return nil, p.refuse(class, books, at, now, latest)
	}
	t := make(ticket, 0, len(books))
	for _, b := range books {
		t = append(t, booking{book: b, turn: b.book(at)})
	}
	p.mu.Unlock()
	for {
		if err := p.sleepUntil(ctx, at); err != nil {
			p.cancel(t)
			return nil, err
		}
		p.mu.Lock()
		now = p.clock.Now()
		// While this request waited, a 429 may have stopped the class, or answers of the requests
		// before it came later than their turns: the API may still count them in the window.
		// The turn moves to when the windows allow it.
		at = now
		for _, b := range t {
			at = latestOf(at, b.book.clearance(b.turn, now))
		}
		if !at.After(now) {
			p.mu.Unlock()
			turnWait.Observe(p.clock.Since(start).Seconds(), map[string]string{classLabel.Name: string(class)})
			return t, nil
		}
		if at.After(latest) {
			for _, b := range t {
				b.book.cancel(b.turn)
			}
			err := p.refuse(class, books, at, now, latest)
			p.mu.Unlock()
			return nil, err
		}
		for _, b := range t {
			b.book.move(b.turn, at)
		}
		p.mu.Unlock()
	}
}

// refuse counts and describes a turn at, asked at now, that comes after latest. Call with mu held.
func (p *Pacer) refuse(class RouteClass, books []*turnBook, at, now, latest time.Time) error {
	turnsRefused.Inc(map[string]string{classLabel.Name: string(class)})
	var pace time.Duration
	for _, b := range books {
		pace = max(pace, b.length/time.Duration(b.limit))
	}
	return &TurnError{Class: class, In: at.Sub(now), By: latest, Pace: pace}
}

// settle marks the request holding t answered at now: the API counted it no later than that.
func (p *Pacer) settle(t ticket) {
	if len(t) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.clock.Now()
	for _, b := range t {
		b.turn.answered = true
		b.book.warm = true
		if now.After(b.turn.at) {
			b.book.move(b.turn, now)
		}
	}
}

// latest is the last moment a request of class asked at now may be sent.
func (p *Pacer) latest(ctx context.Context, class RouteClass, now time.Time) time.Time {
	latest := now.Add(p.maxWait)
	creates := class == ClassLinodeCreate || class == ClassPoolCreate
	if by, ok := ctx.Value(turnByKey{}).(time.Time); ok && creates {
		latest = by
	}
	if deadline, ok := ctx.Deadline(); ok && deadline.Before(latest) {
		latest = deadline
	}
	return latest
}

func (p *Pacer) sleepUntil(ctx context.Context, t time.Time) error {
	d := t.Sub(p.clock.Now())
	if d <= 0 {
		return ctx.Err()
	}
	timer := p.clock.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C():
		return nil
	}
}

func (p *Pacer) cancel(t ticket) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range t {
		b.book.cancel(b.turn)
	}
}

// budgetClass is the class whose budget Linode charges a request of class to: the unpublished
// classes count against every other request's.
func budgetClass(class RouteClass) RouteClass {
	switch class {
	case ClassLinodeCreate, ClassList:
		return class
	default:
		return ClassOther
	}
}

// chain is the books a request of class takes a turn in: its own, then its budget's when that is
// another. Call with mu held.
func (p *Pacer) chain(class RouteClass) []*turnBook {
	var books []*turnBook
	if b, ok := p.books[class]; ok {
		books = append(books, b)
	}
	if budget := budgetClass(class); budget != class {
		if b, ok := p.books[budget]; ok {
			books = append(books, b)
		}
	}
	return books
}

// observe corrects the books with what the API said of a request of class it answered at now. A
// rate-limit header the client cannot believe is logged, once per header for the life of the
// pacer: a proxy or clock that sends one sends it on every answer.
func (p *Pacer) observe(ctx context.Context, class RouteClass, resp *http.Response) {
	a, doubts := readAnswer(resp)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, doubt := range doubts {
		if !p.doubted[doubt.header] {
			p.doubted[doubt.header] = true
			log.FromContext(ctx).Info("a Linode API answer's rate-limit header is not believed; further ones are not logged",
				"header", doubt.header, "value", doubt.value, "taken as", doubt.takenAs)
		}
	}
	now := p.clock.Now()
	// The headers describe the budget Linode charged, which for the unpublished classes is that
	// of every other request; a dedicated limit Linode might give them would not match its size.
	// Only the create budget is one operation's: a list's answer may describe a limit of that
	// list alone (Linode allows 20 listings of images a minute), not of every list.
	if b, ok := p.books[budgetClass(class)]; ok {
		b.observe(now, a, class == ClassLinodeCreate)
	}
	if a.status == http.StatusTooManyRequests {
		if books := p.chain(class); len(books) > 0 {
			books[0].pause(now, a)
		}
	}
}

// MaxPause bounds how long one answer's Retry-After or X-RateLimit-Reset stops a class of
// requests. Linode's windows are 15 s to a minute, so no wait the API means is longer than a
// minute; twice that leaves room for its clock against ours, and is as long as any request waits
// for its turn anyway (DefaultMaxTurnWait). A longer one comes from a broken proxy or clock, and
// believed, it would stop every launch and deletion for as long as it says: years, for a date
// mistaken for a number of seconds.
const MaxPause = 2 * time.Minute

// answer is what a response says of its budget; -1 or zero where a header is missing or not
// believed.
type answer struct {
	status     int
	limit      int
	remaining  int
	resetIn    time.Duration
	retryAfter time.Duration
}

// doubt is a rate-limit header readAnswer did not take as it came.
type doubt struct {
	header, value, takenAs string
}

// readAnswer reads what a response says of its budget. A wait (Retry-After, X-RateLimit-Reset)
// longer than MaxPause is taken as MaxPause; one that is malformed, negative or already past is
// ignored; each is returned as a doubt.
func readAnswer(resp *http.Response) (answer, []doubt) {
	a := answer{status: resp.StatusCode, limit: -1, remaining: -1}
	var doubts []doubt
	count := func(name string) int {
		value := resp.Header.Get(name)
		if value == "" {
			return -1
		}
		v, err := strconv.Atoi(value)
		if err != nil || v < 0 {
			doubts = append(doubts, doubt{header: name, value: value, takenAs: "missing"})
			return -1
		}
		return v
	}
	a.limit = count("X-RateLimit-Limit")
	a.remaining = count("X-RateLimit-Remaining")
	// The API's clock when it answered: X-RateLimit-Reset, and Retry-After given as a date, are
	// times on it, which the Date header makes delays on ours.
	date, dateErr := http.ParseTime(resp.Header.Get("Date"))
	wait := func(name string, in func(string) (time.Duration, bool)) time.Duration {
		value := resp.Header.Get(name)
		if value == "" {
			return 0
		}
		d, ok := in(value)
		switch {
		case !ok || d < 0:
			doubts = append(doubts, doubt{header: name, value: value, takenAs: "missing"})
			return 0
		case d > MaxPause:
			doubts = append(doubts, doubt{header: name, value: value, takenAs: MaxPause.String()})
			return MaxPause
		}
		return d
	}
	// Far-off times are compared in seconds, where they cannot overflow a Duration.
	const maxPauseSeconds = int64(MaxPause / time.Second)
	a.retryAfter = wait("Retry-After", func(value string) (time.Duration, bool) {
		if seconds, err := strconv.ParseInt(value, 10, 64); err == nil {
			return time.Duration(max(min(seconds, maxPauseSeconds+1), -1)) * time.Second, true
		}
		at, err := http.ParseTime(value)
		if err != nil || dateErr != nil {
			return 0, false
		}
		return time.Duration(min(at.Unix()-date.Unix(), maxPauseSeconds+1)) * time.Second, true
	})
	a.resetIn = wait("X-RateLimit-Reset", func(value string) (time.Duration, bool) {
		reset, err := strconv.ParseInt(value, 10, 64)
		if err != nil || dateErr != nil {
			return 0, false
		}
		// Both are whole seconds: a second more errs on the side of waiting. (Dates are within
		// years 0 to 9999, so neither sum overflows.)
		if reset < date.Unix() {
			return -time.Second, true
		}
		return time.Duration(min(reset, date.Unix()+maxPauseSeconds)-date.Unix()+1) * time.Second, true
	})
	return a, doubts
}

// turnBook books the turns of one budget over sliding windows.
type turnBook struct {
	limit  int
	length time.Duration
	// turns are the requests not yet a window old, in order of at; some may be to come.
	turns []*turn
	// pausedUntil is the end of a 429's Retry-After: no turn before it.
	pausedUntil time.Time
	// warm is set by the first answer. Until then the book cannot know what others sent in the
	// API's window (a controller just started, or a standby that took over from a leader in the
	// middle of a burst): one request goes, and its answer's X-RateLimit-Remaining tells.
	warm bool
}

// coldPoll is how often a request waiting for a cold book's first answer looks again, and
// coldPatience how long it waits for it: a turn taken but never sent (its call failed before it
// left) is never answered.
const (
	coldPoll     = 50 * time.Millisecond
	coldPatience = 5 * time.Second
)

// turn is one request's place in a book: when it leaves, and once it is answered, when the answer
// came. The API counts a request when it arrives, at some moment between the two, so a turn
// counts in the book's windows until a window after its answer, and while it is in flight, as if
// it arrived at this moment. Under load the answer may come long after the turn; the windows of
// the requests booked after it then start later.
type turn struct {
	at       time.Time
	answered bool
}

// countsFrom is when the API counted the request holding u, as late as it can have been: its
// answer, or for a request in flight, now.
func (u *turn) countsFrom(now time.Time) time.Time {
	if u.answered {
		return u.at
	}
	return latestOf(u.at, now)
}

// prune drops the answered requests a window old. One in flight stays until its answer: the
// transport answers every request it sent, with an error at worst once the request times out,
// and gives back the turns it did not send.
func (b *turnBook) prune(now time.Time) {
	b.turns = slices.DeleteFunc(b.turns, func(u *turn) bool { return u.answered && !u.at.After(now.Add(-b.length)) })
}

// next is the earliest turn a request asking at now may book: after every booked turn (turns go
// in order of asking), and a window after the turn limit turns before it.
func (b *turnBook) next(now time.Time) time.Time {
	b.prune(now)
	t := latestOf(now, b.pausedUntil)
	if n := len(b.turns); n > 0 {
		t = latestOf(t, b.turns[n-1].at)
		if n >= b.limit {
			t = latestOf(t, b.turns[n-b.limit].at.Add(b.length))
		}
	}
	return t
}

// clearance is the earliest moment from now that the request holding t may leave: when the
// window before it holds fewer than limit other requests, the book is not paused, and, while the
// book is cold, no request before it is still unanswered.
func (b *turnBook) clearance(t *turn, now time.Time) time.Time {
	b.prune(now)
	var counted []time.Time
	ahead := true
	for _, u := range b.turns {
		if u == t {
			ahead = false
			continue
		}
		if u.at.After(now) {
			continue
		}
		if !b.warm && ahead && !u.answered && now.Sub(u.at) < coldPatience {
			return now.Add(coldPoll)
		}
		counted = append(counted, u.countsFrom(now))
	}
	clear := latestOf(now, b.pausedUntil)
	if over := len(counted) - b.limit; over >= 0 {
		slices.SortFunc(counted, time.Time.Compare)
		clear = latestOf(clear, counted[over].Add(b.length))
	}
	return clear
}

func (b *turnBook) book(at time.Time) *turn {
	t := &turn{at: at}
	b.insert(t)
	return t
}

// cancel gives back a booked turn. The turns after it keep theirs: fewer sends only leave more
// room in their windows.
func (b *turnBook) cancel(t *turn) {
	if i := slices.Index(b.turns, t); i >= 0 {
		b.turns = slices.Delete(b.turns, i, i+1)
	}
}

// move sets t's time to at, keeping the turns in order.
func (b *turnBook) move(t *turn, at time.Time) {
	b.cancel(t)
	t.at = at
	b.insert(t)
}

func (b *turnBook) insert(t *turn) {
	i, _ := slices.BinarySearchFunc(b.turns, t.at, func(u *turn, at time.Time) int { return u.at.Compare(at) })
	for i < len(b.turns) && b.turns[i].at.Equal(t.at) {
		i++
	}
	b.turns = slices.Insert(b.turns, i, t)
}

// observe takes in the API's count of the window: a lower limit than the book's, when the answer
// can only be of this budget (lowers), and more requests used than the book sent in the last
// window, counted as sent when the API's window began, so that they leave the book when it
// resets.
func (b *turnBook) observe(now time.Time, a answer, lowers bool) {
	if lowers && a.limit > 0 && a.limit < b.limit {
		b.limit = a.limit
	}
	if a.limit != b.limit || a.remaining < 0 {
		return
	}
	b.prune(now)
	sent := 0
	for _, t := range b.turns {
		if !t.at.After(now) {
			sent++
		}
	}
	used := min(a.limit-a.remaining, b.limit)
	if used <= sent {
		return
	}
	at := now
	if a.resetIn > 0 && a.resetIn < b.length {
		at = now.Add(a.resetIn - b.length)
	}
	for range used - sent {
		b.book(at).answered = true
	}
}

// pause stops the book until the API's Retry-After, or its window's reset, or a window.
func (b *turnBook) pause(now time.Time, a answer) {
	wait := b.length
	switch {
	case a.retryAfter > 0:
		wait = a.retryAfter
	case a.resetIn > 0:
		wait = a.resetIn
	}
	b.pausedUntil = latestOf(b.pausedUntil, now.Add(wait))
}

func latestOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// classOf names the class of a request to path (with its version prefix).
func classOf(method, path string) RouteClass {
	segments := strings.Split(strings.Trim(path, "/"), "/")
	if len(segments) > 0 && strings.HasPrefix(segments[0], "v4") {
		segments = segments[1:]
	}
	switch {
	case method == http.MethodPost && matchesPath(segments, []string{"linode", "instances"}):
		return ClassLinodeCreate
	case method == http.MethodDelete && matchesPath(segments, []string{"linode", "instances", "*"}):
		return ClassLinodeDelete
	case method == http.MethodPost && matchesPath(segments, []string{"lke", "clusters", "*", "pools"}):
		return ClassPoolCreate
	case method == http.MethodDelete && (matchesPath(segments, []string{"lke", "clusters", "*", "pools", "*"}) ||
		matchesPath(segments, []string{"lke", "clusters", "*", "nodes", "*"})):
		return ClassPoolDelete
	case method == http.MethodGet && isListPath(segments):
		return ClassList
	}
	return ClassOther
}

// pacingTransport takes a turn for each attempt linodego makes, retries included, and feeds the
// answers back to the pacer. The request's timeout starts once it has its turn: it bounds the
// request from when it leaves until its body is read (an http.Client's timeout would count the
// wait too).
type pacingTransport struct {
	pacer   *Pacer
	timeout time.Duration
	base    http.RoundTripper
}

func (t *pacingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	class := classOf(req.Method, req.URL.Path)
	turn, err := t.pacer.takeForAttempt(req.Context(), class)
	if err != nil {
		return nil, err
	}
	cancel := func() {}
	if t.timeout > 0 {
		var ctx context.Context
		ctx, cancel = context.WithTimeout(req.Context(), t.timeout)
		req = req.WithContext(ctx)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		t.pacer.settle(turn)
		cancel()
		return nil, err
	}
	// The answer's count goes in the books before the requests waiting for a first answer see it.
	t.pacer.observe(req.Context(), class, resp)
	t.pacer.settle(turn)
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose ends a request's timeout once its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelOnClose) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// ParseBudgets reads budgets written class=requests/window, comma-separated (e.g.
// "linode_create=20/15s,lke_pool_create=10/1m"), over the defaults; 0 requests leaves a class
// unpaced.
func ParseBudgets(text string) (map[RouteClass]Budget, error) {
	budgets := DefaultBudgets()
	for _, entry := range strings.Split(text, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, value, ok := strings.Cut(entry, "=")
		class := RouteClass(strings.TrimSpace(name))
		if !ok || !slices.Contains(RouteClasses, class) {
			return nil, fmt.Errorf("%q does not name a class of requests: use one of %v, then =requests/window", entry, RouteClasses)
		}
		count, window, ok := strings.Cut(value, "/")
		requests, err := strconv.Atoi(strings.TrimSpace(count))
		if !ok || err != nil || requests < 0 {
			return nil, fmt.Errorf("%q is not requests/window, e.g. %s=20/15s", entry, class)
		}
		length, err := time.ParseDuration(strings.TrimSpace(window))
		if err != nil || length <= 0 {
			return nil, fmt.Errorf("%q is not requests/window, e.g. %s=20/15s", entry, class)
		}
		if requests == 0 {
			delete(budgets, class)
			continue
		}
		budgets[class] = Budget{Requests: requests, Window: length}
	}
	return budgets, nil
}
