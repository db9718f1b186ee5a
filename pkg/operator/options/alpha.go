package options

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
)

// The alpha Linode provider's configuration reference lists environment variables of its own.
// LINODE_TOKEN, CLUSTER_NAME, LINODE_REGION, CLUSTER_ENDPOINT, KARPENTER_MODE and
// LINODE_CLIENT_TIMEOUT mean the same here. The others are read under their new name, or refused
// with a line that says what replaces them: a setting never disappears without a word.

// hypervisorMemoryPercentFromEnv reads HYPERVISOR_MEMORY_PERCENT, or else the alpha provider's
// VM_MEMORY_OVERHEAD_PERCENT, the same share as a fraction (0.075 is 7.5%).
func (o *Options) hypervisorMemoryPercentFromEnv(def float64) float64 {
	fraction, alpha := os.LookupEnv("VM_MEMORY_OVERHEAD_PERCENT")
	if !alpha {
		return o.floatFromEnv("HYPERVISOR_MEMORY_PERCENT", def)
	}
	if _, ours := os.LookupEnv("HYPERVISOR_MEMORY_PERCENT"); ours {
		o.malformedEnvironment = append(o.malformedEnvironment, errors.New("VM_MEMORY_OVERHEAD_PERCENT and HYPERVISOR_MEMORY_PERCENT are both set: keep HYPERVISOR_MEMORY_PERCENT, its replacement (a percentage: 0.075 there is 7.5 here)"))
		return o.floatFromEnv("HYPERVISOR_MEMORY_PERCENT", def)
	}
	f, err := strconv.ParseFloat(fraction, 64)
	if err != nil || !(f >= 0 && f < 0.5) {
		o.malformedEnvironment = append(o.malformedEnvironment, fmt.Errorf("VM_MEMORY_OVERHEAD_PERCENT %q is not valid: use a fraction from 0 to 0.5, or HYPERVISOR_MEMORY_PERCENT, its replacement, as a percentage", fraction))
		return def
	}
	percent := f * 100
	o.AlphaSettings = append(o.AlphaSettings, fmt.Sprintf("VM_MEMORY_OVERHEAD_PERCENT=%s as HYPERVISOR_MEMORY_PERCENT=%g", fraction, percent))
	return percent
}

// refuseAlphaOnlySettings refuses the alpha provider's settings that have no equivalent.
func (o *Options) refuseAlphaOnlySettings() {
	// The alpha provider checked each LinodeNodeClass with a dry-run launch unless told not to.
	// There is no dry run here: the apiserver validates the class at apply time, and the
	// controller checks it against the Linode API into its status conditions. Asking for the
	// dry run (false) is what happens anyway; turning validation off is not possible.
	if value, ok := os.LookupEnv("DISABLE_DRY_RUN"); ok {
		disabled, err := strconv.ParseBool(value)
		switch {
		case err != nil:
			o.malformedEnvironment = append(o.malformedEnvironment, fmt.Errorf("DISABLE_DRY_RUN %q is not a boolean: remove it, it has no replacement", value))
		case disabled:
			o.malformedEnvironment = append(o.malformedEnvironment, errors.New("DISABLE_DRY_RUN=true is not supported: LinodeNodeClasses are validated at apply time and by their status conditions, with no dry-run launch to turn off; remove it"))
		}
	}
}

// validateClusterEndpoint checks CLUSTER_ENDPOINT, the API server URL nodes join in instance mode.
func validateClusterEndpoint(endpoint string) error {
	if endpoint == "" {
		return nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "https" || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return fmt.Errorf("CLUSTER_ENDPOINT %q is not the https URL of a Kubernetes API server, e.g. https://203.0.113.10:6443 (helm: settings.clusterEndpoint)", endpoint)
	}
	return nil
}
