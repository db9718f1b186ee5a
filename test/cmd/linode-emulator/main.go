// Command linode-emulator serves the Linode API emulator on a loopback port
// for demos and manual testing. It prints the URL to give linodego
// (client.SetBaseURL) and the ids of the clusters it seeded, then serves
// until interrupted.
//
//	linode-emulator --lke-cluster name=demo,region=us-east,tier=standard --delay-scale 0.1
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/linode/karpenter-provider-linode/test/emulator"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "linode-emulator:", err)
		os.Exit(1)
	}
}

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func run(args []string) error {
	fs := flag.NewFlagSet("linode-emulator", flag.ContinueOnError)
	defaults := emulator.DefaultDelays()
	var (
		address      = fs.String("address", "127.0.0.1:0", "listen address")
		token        = fs.String("token", emulator.DefaultToken, "bearer token clients must send")
		scale        = fs.Float64("delay-scale", 1, "multiply every state machine delay by this factor (0: instant)")
		nodeInstance = fs.Duration("node-instance-delay", defaults.NodeInstance, "LKE node created -> its Linode exists")
		provisioning = fs.Duration("provisioning-delay", defaults.Provisioning, "Linode provisioning -> booting")
		booting      = fs.Duration("booting-delay", defaults.Booting, "Linode booting -> running")
		listingLag   = fs.Duration("enterprise-node-lag", defaults.EnterpriseNodeListing, "enterprise pool node created -> listed in its pool")
		noRateLimits = fs.Bool("no-rate-limits", false, "disable rate limiting")
		seed         = fs.Int64("seed", 1, "random seed")
		clusters     listFlag
		capacities   listFlag
	)
	fs.Var(&clusters, "lke-cluster", "seed an LKE cluster: name=NAME,region=REGION[,tier=standard|enterprise] (repeatable)")
	fs.Var(&capacities, "capacity", "limit capacity: region=REGION,plan=PLAN,count=N (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}

	opts := []emulator.Option{
		emulator.WithAddress(*address),
		emulator.WithToken(*token),
		emulator.WithSeed(*seed),
		emulator.WithDelays(emulator.Delays{
			NodeInstance: *nodeInstance, Provisioning: *provisioning,
			Booting: *booting, EnterpriseNodeListing: *listingLag,
		}.Scaled(*scale)),
	}
	if *noRateLimits {
		opts = append(opts, emulator.WithoutRateLimits())
	}
	emu := emulator.New(opts...)

	for _, spec := range capacities {
		kv, err := parseKeyValues(spec, "region", "plan", "count")
		if err != nil {
			return fmt.Errorf("--capacity %q: %w", spec, err)
		}
		n, err := strconv.Atoi(kv["count"])
		if err != nil {
			return fmt.Errorf("--capacity %q: count: %w", spec, err)
		}
		emu.SetCapacity(kv["region"], kv["plan"], n)
	}
	var seeded []string
	for _, spec := range clusters {
		kv, err := parseKeyValues(spec, "name", "region")
		if err != nil {
			return fmt.Errorf("--lke-cluster %q: %w", spec, err)
		}
		id, err := emu.AddLKECluster(kv["name"], kv["region"], kv["tier"])
		if err != nil {
			return err
		}
		seeded = append(seeded, fmt.Sprintf("LKE cluster %s: id %d", kv["name"], id))
	}

	if err := emu.Start(); err != nil {
		return err
	}
	defer emu.Close()
	fmt.Println("Linode API emulator listening on", emu.URL())
	fmt.Println("  linodego: client.SetBaseURL(" + strconv.Quote(emu.URL()) + "); client.SetToken(" + strconv.Quote(emu.Token()) + ")")
	fmt.Println("  admin:    " + emu.URL() + "/_emulator/state")
	for _, s := range seeded {
		fmt.Println("  " + s)
	}

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	<-stop
	return nil
}

// parseKeyValues parses "k=v,k=v" and checks the required keys are present.
func parseKeyValues(spec string, required ...string) (map[string]string, error) {
	kv := map[string]string{}
	for _, part := range strings.Split(spec, ",") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not key=value", part)
		}
		kv[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	for _, k := range required {
		if kv[k] == "" {
			return nil, fmt.Errorf("%s is required", k)
		}
	}
	return kv, nil
}
