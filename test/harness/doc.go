// Package harness is what the benchmarks (test/bench) and the fault matrix (test/chaos) share: a
// new local cluster per provider (this controller in LKE or instance mode, or core's kwok provider
// as the baseline) with a NodePool and a workload on it (Env), a recorder of when each pod, Node
// and NodeClaim reached each state, on this process's clock (Recorder), percentiles, the machine
// a report was measured on, and the command-line plumbing of test/cmd/bench and test/cmd/chaos
// (Command: the results directory, flags naming scenarios or faults, the run until interrupted,
// the report's writing).
package harness
