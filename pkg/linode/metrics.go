package linode

import (
	"net/http"
	"strconv"
	"strings"

	opmetrics "github.com/awslabs/operatorpkg/metrics"
	"github.com/prometheus/client_golang/prometheus"
	crmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/karpenter/pkg/metrics"
)

// Linode counts each request against one of three budgets per token: paginated GETs (lists),
// Linode creates, and everything else.
const (
	budgetList   = "list"
	budgetCreate = "linode_create"
	budgetOther  = "other"
)

var (
	budgetLabel = opmetrics.Label{
		Name: "budget",
		Help: "The rate limit the request counts against.",
		Values: []opmetrics.Value{
			{Name: budgetList, Help: "Paginated GETs: listing a collection (Linode allows 200 a minute)."},
			{Name: budgetCreate, Help: "POST /linode/instances (Linode allows 20 per 15 seconds)."},
			{Name: budgetOther, Help: "Every other request (Linode allows 1600 a minute)."},
		},
	}
	classLabel = opmetrics.Label{
		Name: "class",
		Help: "The requests paced together.",
		Values: []opmetrics.Value{
			{Name: string(ClassLinodeCreate), Help: "POST /linode/instances (Linode allows 20 per 15 seconds)."},
			{Name: string(ClassLinodeDelete), Help: "DELETE /linode/instances/{id}."},
			{Name: string(ClassPoolCreate), Help: "POST /lke/clusters/{id}/pools."},
			{Name: string(ClassPoolDelete), Help: "The delete of an LKE pool or of one node of a pool."},
			{Name: string(ClassList), Help: "Paginated GETs (Linode allows 200 a minute)."},
			{Name: string(ClassOther), Help: "Every other request (Linode allows 1600 a minute)."},
		},
	}
	codeLabel = opmetrics.Label{Name: "code", Help: "The HTTP status of the answer; 429 is the API refusing a request over its budget."}

	apiRequests = opmetrics.NewPrometheusCounter(crmetrics.Registry, prometheus.CounterOpts{
		Namespace: metrics.Namespace,
		Subsystem: "linode_api",
		Name:      "requests_total",
		Help:      "Answers of the Linode API to the controller, retries included, by the rate limit the request counts against and the answer's HTTP status.",
	}, []opmetrics.Label{budgetLabel, codeLabel}, opmetrics.Beta)
	rateLimit = opmetrics.NewPrometheusGauge(crmetrics.Registry, prometheus.GaugeOpts{
		Namespace: metrics.Namespace,
		Subsystem: "linode_api",
		Name:      "rate_limit",
		Help:      "Requests the token may make in a window of the budget, as the API's last answer for it said (X-RateLimit-Limit).",
	}, []opmetrics.Label{budgetLabel}, opmetrics.Beta)
	turnWait = opmetrics.NewPrometheusHistogram(crmetrics.Registry, prometheus.HistogramOpts{
		Namespace: metrics.Namespace,
		Subsystem: "linode_api",
		Name:      "turn_wait_seconds",
		Help:      "Time a request waited for its turn in the Linode API's rate limits before it was sent, by the class of requests paced together.",
		Buckets:   []float64{0.001, 0.01, 0.1, 0.5, 1, 2.5, 5, 10, 15, 30, 60, 120, 240},
	}, []opmetrics.Label{classLabel}, opmetrics.Beta)
	turnsRefused = opmetrics.NewPrometheusCounter(crmetrics.Registry, prometheus.CounterOpts{
		Namespace: metrics.Namespace,
		Subsystem: "linode_api",
		Name:      "turns_refused_total",
		Help:      "Requests not sent because their turn in the Linode API's rate limits came later than they could wait; their controllers retry them.",
	}, []opmetrics.Label{classLabel}, opmetrics.Beta)
	rateLimitRemaining = opmetrics.NewPrometheusGauge(crmetrics.Registry, prometheus.GaugeOpts{
		Namespace: metrics.Namespace,
		Subsystem: "linode_api",
		Name:      "rate_limit_remaining",
		Help:      "Requests the token had left in the budget's current window, as the API's last answer for it said (X-RateLimit-Remaining).",
	}, []opmetrics.Label{budgetLabel}, opmetrics.Beta)
)

// listPaths are the collections Linode pages, below the version; "*" stands for one path segment
// (an id). A GET of anything else reads one object.
var listPaths = [][]string{
	{"regions"}, {"regions", "availability"}, {"regions", "vpc-availability"},
	{"linode", "types"}, {"images"},
	{"lke", "versions"}, {"lke", "tiers", "*", "versions"}, {"lke", "types"}, {"lke", "clusters"},
	{"lke", "clusters", "*", "pools"}, {"lke", "clusters", "*", "api-endpoints"},
	{"linode", "instances"}, {"linode", "instances", "*", "configs"}, {"linode", "instances", "*", "disks"},
	{"linode", "instances", "*", "interfaces"}, {"networking", "ipv6", "ranges"},
	{"account", "events"}, {"account", "maintenance"}, {"maintenance", "policies"},
	{"networking", "firewalls"}, {"networking", "firewalls", "templates"}, {"networking", "firewalls", "rulesets"},
	{"networking", "ips"}, {"networking", "reserved", "ips"}, {"networking", "reserved", "ips", "types"},
	{"vpcs"}, {"vpcs", "ips"}, {"vpcs", "*", "ips"}, {"vpcs", "*", "subnets"},
	{"placement", "groups"},
}

// budgetOf names the rate limit a request to path (with its version prefix) counts against.
func budgetOf(method, path string) string {
	segments := strings.Split(strings.Trim(path, "/"), "/")
	if len(segments) > 0 && strings.HasPrefix(segments[0], "v4") {
		segments = segments[1:]
	}
	switch {
	case method == http.MethodPost && matchesPath(segments, []string{"linode", "instances"}):
		return budgetCreate
	case method == http.MethodGet && isListPath(segments):
		return budgetList
	}
	return budgetOther
}

func isListPath(segments []string) bool {
	for _, list := range listPaths {
		if matchesPath(segments, list) {
			return true
		}
	}
	return false
}

func matchesPath(segments, pattern []string) bool {
	if len(segments) != len(pattern) {
		return false
	}
	for i := range pattern {
		if pattern[i] != "*" && pattern[i] != segments[i] {
			return false
		}
	}
	return true
}

// recordAnswer counts an answer of the API and keeps what it said of the request's budget.
func recordAnswer(req *http.Request, resp *http.Response) {
	budget := budgetOf(req.Method, req.URL.Path)
	apiRequests.Inc(map[string]string{budgetLabel.Name: budget, codeLabel.Name: strconv.Itoa(resp.StatusCode)})
	labels := map[string]string{budgetLabel.Name: budget}
	if limit, err := strconv.Atoi(resp.Header.Get("X-RateLimit-Limit")); err == nil {
		rateLimit.Set(float64(limit), labels)
	}
	if remaining, err := strconv.Atoi(resp.Header.Get("X-RateLimit-Remaining")); err == nil {
		rateLimitRemaining.Set(float64(remaining), labels)
	}
}
