# karpenter-provider-linode. `make help` lists the targets.
#
# Karpenter core v1.15 needs Go 1.26.9 or newer; the Go command fetches this toolchain from the
# module proxy on first use.
export GOTOOLCHAIN := go1.27.3
SHELL := /bin/bash
FUZZTIME ?= 10s

BIN_DIR := $(CURDIR)/bin
TOOLS_MOD := $(CURDIR)/hack/codegen
CONTROLLER_GEN := $(BIN_DIR)/controller-gen
GOTESTSUM := $(BIN_DIR)/gotestsum
GOLANGCI_LINT := $(BIN_DIR)/golangci-lint
HELM_DOCS := $(BIN_DIR)/helm-docs

# What the tests, the local clusters and the benchmarks run; kubectl is built only for make demo.
K8S_BINARIES := etcd kube-apiserver kube-scheduler kube-controller-manager kwok
K8S_BIN_DIR_CMD := hack/build-k8s-binaries.sh $(K8S_BINARIES) 2>/dev/null | tail -n1

# Packages whose tests also run under the race detector (concurrency is what they are about).
RACE_PKGS ?= ./test/emulator/...

.PHONY: help
help: ## Show this help
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

# The end-to-end suites are listed first so that go test starts them first: they spend most of
# their minutes waiting on their local clusters, and the other packages compile and run beside
# them, one more package at a time than there are cores to keep the CPU busy meanwhile.
E2E_PKGS := ./test/e2e ./test/e2e/upkeep ./test/e2e/instance ./test/e2e/lifecycle/enterprise

# go vet runs in make lint, with every analyzer, not a second time here.
TEST_FLAGS ?= -count=1 -vet=off

.PHONY: test
test: k8s-binaries $(GOTESTSUM) ## Run every test against a real kube-apiserver, etcd and the Linode emulator
	KUBEBUILDER_ASSETS="$$($(K8S_BIN_DIR_CMD))" \
		$(GOTESTSUM) --format testname -- $(TEST_FLAGS) -p 3 -timeout 30m $(E2E_PKGS) ./...
ifneq ($(strip $(RACE_PKGS)),)
	$(GOTESTSUM) --format testname -- $(TEST_FLAGS) -race -timeout 15m $(RACE_PKGS)
endif

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME each (10s); a failing input lands in its package's testdata/fuzz
	FUZZTIME=$(FUZZTIME) hack/fuzz.sh

.PHONY: demo
demo: ## The README walk-through on a local cluster and the Linode API emulator (no Linode account); DEMO_FLAGS=--keep
	go run ./test/cmd/demo $(DEMO_FLAGS)

.PHONY: plan
plan: ## Build bin/karpenter-linode (karpenter-linode plan) and bin/kubectl-linode_plan, the kubectl plugin `kubectl linode-plan`
	go build -o $(BIN_DIR)/karpenter-linode ./cmd/karpenter-linode
	ln -sf karpenter-linode $(BIN_DIR)/kubectl-linode_plan

.PHONY: e2e
e2e: k8s-binaries ## Only the end-to-end suites: the controller on a local cluster with kwok kubelets and the emulator
	KUBEBUILDER_ASSETS="$$($(K8S_BIN_DIR_CMD))" go test -count=1 -timeout 30m ./test/e2e/...

# Shorter than reallinode.MaxRunDuration, so that a run's tag older than that is a killed run's.
# Ginkgo's grace period gives an interrupted run's clean-up the time to delete what it made.
.PHONY: e2e-linode
e2e-linode: ## The lifecycle specs on real LKE clusters of both tiers, in the account of LINODE_TOKEN; costs money (docs/e2e-linode.md)
	go test -tags e2elinode -count=1 -timeout 2h -v ./test/e2e/reallinode -run TestRealLinode -ginkgo.grace-period=5m

.PHONY: bench
bench: k8s-binaries ## Benchmarks on local clusters and in process, next to core's kwok provider; report in results/ (about an hour and a half: the cost fleets, then the day's 24 minutes)
	go run ./test/cmd/bench $(BENCH_FLAGS)

.PHONY: bench-quick
bench-quick: k8s-binaries ## Smaller, shorter benchmarks (the day in 2 minutes) and the fault matrix's short version, for CI (about 12 min)
	go run ./test/cmd/bench -quick $(BENCH_FLAGS)
	go run ./test/cmd/chaos -quick $(CHAOS_FLAGS)

.PHONY: chaos
chaos: k8s-binaries ## The fault matrix: each fault in turn, in both modes, on a local cluster, what it cost; table in results/ (about 1½ hours)
	go run ./test/cmd/chaos $(CHAOS_FLAGS)

.PHONY: k8s-binaries
k8s-binaries: ## Build kube-apiserver, etcd, kube-scheduler, kube-controller-manager and kwok (minutes the first time)
	hack/build-k8s-binaries.sh $(K8S_BINARIES) >/dev/null

.PHONY: generate
generate: $(CONTROLLER_GEN) $(HELM_DOCS) ## Generate the CRDs and deepcopy code from pkg/apis, the charts' READMEs (helm-docs) and the settings and metrics references
	cd pkg/apis && $(CONTROLLER_GEN) crd object:headerFile="../../hack/boilerplate.go.txt" \
		paths="./..." output:crd:artifacts:config=crds
	hack/sync-chart-crds.sh
	$(HELM_DOCS) --log-level warning --chart-search-root charts --template-files README.md.gotmpl
	go run ./hack/docgen

.PHONY: verify
verify: ## Fail when generated files are stale or edited by hand, or go.mod is untidy
	hack/verify.sh

.PHONY: lint
lint: $(GOLANGCI_LINT) ## golangci-lint: go vet's analyzers, staticcheck, errcheck and the rest of .golangci.yml
	$(GOLANGCI_LINT) run ./...
	$(GOLANGCI_LINT) run --build-tags e2elinode ./test/e2e/reallinode/...

# Tools are built from hack/codegen/go.mod, a module of their own, into bin/.
build-tool = cd $(TOOLS_MOD) && go build -o $@ $(1)
$(CONTROLLER_GEN): $(TOOLS_MOD)/go.mod
	$(call build-tool,sigs.k8s.io/controller-tools/cmd/controller-gen)
$(GOTESTSUM): $(TOOLS_MOD)/go.mod
	$(call build-tool,gotest.tools/gotestsum)
$(GOLANGCI_LINT): $(TOOLS_MOD)/go.mod
	$(call build-tool,github.com/golangci/golangci-lint/v2/cmd/golangci-lint)
$(HELM_DOCS): $(TOOLS_MOD)/go.mod
	$(call build-tool,github.com/norwoodj/helm-docs/cmd/helm-docs)

IMAGE ?= karpenter-provider-linode:dev
.PHONY: image
image: ## Build the controller image from the Dockerfile (needs a container engine: docker or podman)
	docker build --build-arg VERSION="$$(git describe --tags --always --dirty)" -t $(IMAGE) .
