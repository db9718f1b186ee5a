# karpenter-provider-linode. `make help` lists the targets.
#
# Karpenter core v1.15 needs Go 1.26.9 or newer; the Go command fetches this toolchain from the
# module proxy on first use.
export GOTOOLCHAIN := go1.27.3
SHELL := /bin/bash

# Everything make compiles uses the release's flags (static, no cgo; no build machine's paths):
# then the tests, the tools, the Kubernetes binaries and the release binaries share one compile of
# each package in the Go build cache. Different flags would compile every package twice, several
# CPU-minutes of a cold CI run. Binaries are linked without symbol table and DWARF (a third less
# CPU per link, for a hundred test binaries; stack traces keep their function names and lines);
# a build that sets -ldflags itself replaces that.
export CGO_ENABLED := 0
export GOFLAGS += -trimpath -ldflags=-s
# The compiler collects garbage less often at GOGC=200, which pays most on Kubernetes' big
# generated packages: k8s.io/api and client-go compiled from an empty cache took 139 CPU-s instead
# of 176-179 at Go's default; the five Kubernetes binaries (hack/build-k8s-binaries.sh) 757
# instead of 910, kube-scheduler alone 508 instead of 518; golangci-lint's analysis of this module
# 73-85 instead of 88-98 (warm runs), at 5.3 GB instead of 3.9 at the peak. Commands that only
# build, go test's compiles and the short fuzz runs (mostly their instrumented builds) run with
# BUILD_GOGC; what runs the code we build (test binaries, local clusters, the controller in the
# benchmarks, whose memory they report) keeps Go's default.
BUILD_GOGC := GOGC=200
FUZZTIME ?= 10s

BIN_DIR := $(CURDIR)/bin
TOOLS_MOD := $(CURDIR)/hack/codegen
CONTROLLER_GEN := $(BIN_DIR)/controller-gen
GOTESTSUM := $(BIN_DIR)/gotestsum
GOLANGCI_LINT := $(BIN_DIR)/golangci-lint
HELM_DOCS := $(BIN_DIR)/helm-docs
HELM := $(BIN_DIR)/helm
ACTIONLINT := $(BIN_DIR)/actionlint

# What the tests, the local clusters and the benchmarks run; kubectl is built only for make demo.
K8S_BINARIES := etcd kube-apiserver kube-scheduler kube-controller-manager kwok
K8S_BIN_DIR_CMD := hack/build-k8s-binaries.sh $(K8S_BINARIES) 2>/dev/null | tail -n1

# Packages whose tests also run under the race detector (concurrency is what they are about).
RACE_PKGS ?= ./test/emulator/...

.PHONY: help
help: ## Show this help
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

# The end-to-end suites are listed first so that go test starts them first: they spend most of
# their minutes waiting on their local clusters, so each takes a slot of TEST_PARALLEL (go test's
# -p) while using little CPU, and the other packages compile and run beside them in the two
# slots left over.
E2E_PKGS := ./test/e2e ./test/e2e/disruption ./test/e2e/upkeep ./test/e2e/instance ./test/e2e/lifecycle/enterprise

# go vet runs in make lint, with every analyzer, not a second time here.
TEST_FLAGS ?= -count=1 -vet=off
# go test compiles with BUILD_GOGC and runs each test binary with Go's default GOGC again.
TEST_EXEC := -exec 'env -u GOGC'
TEST_PARALLEL ?= 6

.PHONY: test
test: k8s-binaries $(GOTESTSUM) ## Run every test against a real kube-apiserver, etcd and the Linode emulator
	KUBEBUILDER_ASSETS="$$($(K8S_BIN_DIR_CMD))" \
		$(BUILD_GOGC) $(GOTESTSUM) --format testname -- $(TEST_FLAGS) $(TEST_EXEC) -p $(TEST_PARALLEL) -timeout 30m $(E2E_PKGS) ./...
ifneq ($(strip $(RACE_PKGS)),)
	CGO_ENABLED=1 $(BUILD_GOGC) $(GOTESTSUM) --format testname -- $(TEST_FLAGS) $(TEST_EXEC) -race -timeout 15m $(RACE_PKGS)
endif

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME each (10s); a failing input lands in its package's testdata/fuzz
	$(BUILD_GOGC) FUZZTIME=$(FUZZTIME) hack/fuzz.sh

.PHONY: demo
demo: ## The README walk-through on a local cluster and the Linode API emulator (no Linode account); DEMO_FLAGS=--keep
	go run ./test/cmd/demo $(DEMO_FLAGS)

.PHONY: plan
plan: ## Build bin/karpenter-linode (karpenter-linode plan) and bin/kubectl-linode_plan, the kubectl plugin `kubectl linode-plan`
	$(BUILD_GOGC) go build -ldflags "$(VERSION_LDFLAGS)" -o $(BIN_DIR)/karpenter-linode ./cmd/karpenter-linode
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
bench-quick: k8s-binaries ## Smaller, shorter benchmarks (the day in 2 minutes) for CI, a smoke test of every scenario (about 8 min)
	go run ./test/cmd/bench -quick $(BENCH_FLAGS)

.PHONY: chaos-quick
chaos-quick: k8s-binaries ## The fault matrix's short version, for CI: three faults and the shared account (about 4 min)
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
	$(BUILD_GOGC) go run ./hack/docgen

.PHONY: verify
verify: $(CONTROLLER_GEN) $(HELM_DOCS) $(ACTIONLINT) ## Fail when generated files are stale or edited by hand, go.mod is untidy, or a GitHub workflow is wrong (actionlint)
	hack/verify.sh
	$(ACTIONLINT)

.PHONY: lint
lint: $(GOLANGCI_LINT) ## golangci-lint: go vet's analyzers, staticcheck, errcheck and the rest of .golangci.yml
	@# With the tag of the real-Linode suite, which builds only with it: one run lints every file.
	$(BUILD_GOGC) $(GOLANGCI_LINT) run --build-tags e2elinode ./...

# Tools are built from hack/codegen/go.mod, a module of their own, into bin/.
build-tool = cd $(TOOLS_MOD) && $(BUILD_GOGC) go build -o $@ $(1)
# controller-gen and helm are tools of the project's own go.mod (controller-gen at the release made
# for Kubernetes 0.35, whose requirements our module graph already meets; helm at the version of
# the Helm library the chart tests link): they compile against the very k8s.io and Helm packages
# our builds compile, where the tools module's newer Kubernetes compiled them a second time on a
# new machine.
$(CONTROLLER_GEN): go.mod
	$(BUILD_GOGC) go build -o $@ sigs.k8s.io/controller-tools/cmd/controller-gen
$(HELM): go.mod
	$(BUILD_GOGC) go build -o $@ helm.sh/helm/v4/cmd/helm
$(GOTESTSUM): $(TOOLS_MOD)/go.mod
	$(call build-tool,gotest.tools/gotestsum)
$(GOLANGCI_LINT): $(TOOLS_MOD)/go.mod
	$(call build-tool,github.com/golangci/golangci-lint/v2/cmd/golangci-lint)
$(HELM_DOCS): $(TOOLS_MOD)/go.mod
	$(call build-tool,github.com/norwoodj/helm-docs/cmd/helm-docs)
# actionlint is built with its own go.mod's requirements: the tools module's YAML library is newer
# than it compiles with.
$(ACTIONLINT): Makefile
	GOBIN=$(BIN_DIR) $(BUILD_GOGC) go install github.com/rhysd/actionlint/cmd/actionlint@v1.7.12

# The release. One version, VERSION, stamped into every binary and named by both charts; one
# registry, RELEASE_REPO, that the release workflow pushes the image and the charts to and the
# chart's default image names (test/charts checks it).
VERSION := $(shell cat VERSION)
RELEASE_REPO := ghcr.io/linode/karpenter-provider-linode
CHART_REPO := oci://ghcr.io/linode/charts
# make image pushes the image to $(IMAGE_REPO):v$(VERSION) when it is set.
IMAGE_REPO ?=
DIST := $(CURDIR)/dist
IMAGE_PLATFORMS := linux/amd64 linux/arm64
CLI_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
# The image's files and the SBOM are dated by the commit, so that a rebuild is the same image.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
export SOURCE_DATE_EPOCH := $(SOURCE_DATE_EPOCH)
VERSION_PKG := github.com/linode/karpenter-provider-linode/pkg/version
# Karpenter core's own build-info metric and Kubernetes user agent carry core's version.
CORE_VERSION = $(shell GOTOOLCHAIN=$(GOTOOLCHAIN) go list -m -f '{{.Version}}' sigs.k8s.io/karpenter)
VERSION_LDFLAGS = -X $(VERSION_PKG).version=$(VERSION) -X $(VERSION_PKG).commit=$(COMMIT) \
	-X sigs.k8s.io/karpenter/pkg/operator.Version=$(CORE_VERSION)
# Static, reproducible release binaries; -trimpath keeps the build machine's paths out of them
# (the flags every build here uses, said again where they matter most).
RELEASE_BUILD = CGO_ENABLED=0 $(BUILD_GOGC) go build -trimpath -ldflags "-s -w $(VERSION_LDFLAGS)"
IMAGE_TOOL := $(BUILD_GOGC) go -C hack/image run .

.PHONY: image
image: ## Build the controller image for linux/amd64 and linux/arm64 without a container engine: an OCI layout in dist/image and its SBOM; IMAGE_REPO=... pushes it
	for platform in $(IMAGE_PLATFORMS); do \
		GOOS=$${platform%/*} GOARCH=$${platform#*/} $(RELEASE_BUILD) -o $(DIST)/bin/$${platform/\//_}/ ./cmd/controller ./cmd/node-identity || exit 1; \
	done
	$(IMAGE_TOOL) build -version $(VERSION) -bin $(DIST)/bin -out $(DIST)/image -sbom $(DIST)/karpenter-provider-linode.spdx.json \
		-platforms $(subst $(space),$(comma),$(IMAGE_PLATFORMS)) $(if $(IMAGE_REPO),-push $(IMAGE_REPO):v$(VERSION))

.PHONY: image-check
image-check: ## Check the image make image built: both platforms, the non-root user, the entrypoint, and the binary out of its layer answering --version with VERSION
	$(IMAGE_TOOL) check -version $(VERSION) -dir $(DIST)/image -platforms $(subst $(space),$(comma),$(IMAGE_PLATFORMS))

.PHONY: cli
cli: ## Build karpenter-linode for linux and darwin, amd64 and arm64, as archives in dist/cli
	rm -rf $(DIST)/cli && mkdir -p $(DIST)/cli
	for platform in $(CLI_PLATFORMS); do \
		bin=$(DIST)/bin/$${platform/\//_}; \
		GOOS=$${platform%/*} GOARCH=$${platform#*/} $(RELEASE_BUILD) -o $$bin/karpenter-linode ./cmd/karpenter-linode || exit 1; \
		tar --sort=name --mtime=@$(SOURCE_DATE_EPOCH) --owner=0 --group=0 --numeric-owner \
			-czf $(DIST)/cli/karpenter-linode_$${platform/\//_}.tar.gz -C $$bin karpenter-linode -C $(CURDIR) LICENSE || exit 1; \
	done
	@# The binary for this machine must say the build's version.
	host=$(DIST)/bin/$$(go env GOOS)_$$(go env GOARCH)/karpenter-linode; \
		[[ ! -x $$host ]] || $$host version | grep -F " $(VERSION) " || { echo "$$host version does not say $(VERSION)" >&2; exit 1; }

.PHONY: charts
charts: $(HELM) ## Package both charts into dist/charts
	rm -rf $(DIST)/charts
	$(HELM) package charts/karpenter-crd charts/karpenter --destination $(DIST)/charts >/dev/null

.PHONY: release-dry-run
release-dry-run: ## Build every release artifact into dist/ without pushing: the image (both platforms, checked), its SBOM, both charts, the CLI archives, the krew manifest, checksums
	$(MAKE) --no-print-directory image IMAGE_REPO=
	$(MAKE) --no-print-directory image-check
	$(MAKE) --no-print-directory charts cli
	hack/release-files.sh $(VERSION) $(DIST)

.PHONY: release
release: ## On a tag (the release workflow): push the image and both charts to RELEASE_REPO; needs a registry login
	@[[ "$${GITHUB_REF_NAME:-v$(VERSION)}" == "v$(VERSION)" ]] || { echo "the tag $$GITHUB_REF_NAME is not v$(VERSION), the VERSION file's" >&2; exit 1; }
	$(MAKE) --no-print-directory image IMAGE_REPO=$(RELEASE_REPO)
	$(MAKE) --no-print-directory image-check charts cli
	hack/release-files.sh $(VERSION) $(DIST)
	for chart in $(DIST)/charts/*.tgz; do $(HELM) push $$chart $(CHART_REPO) || exit 1; done

comma := ,
space := $(eval) $(eval)
