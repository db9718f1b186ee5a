package localcluster

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The controller runs as the chart's ServiceAccount, authenticated by a token the apiserver
// issued for it, and whatever its RBAC refuses the cluster reports.
func TestControllerRunsAsTheChartsServiceAccount(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cluster, err := Start(ctx, Options{WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cluster.Stop(); err != nil {
			t.Error(err)
		}
	})
	refusals, err := cluster.ControllerRefusals()
	if err != nil || len(refusals) > 0 {
		t.Errorf("the controller started with requests refused: %v %v", refusals, err)
	}

	config, err := clientcmd.BuildConfigFromFlags("", cluster.ControllerKubeconfigPath)
	if err != nil {
		t.Fatal(err)
	}
	asController, err := client.New(config, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	review := &authenticationv1.SelfSubjectReview{}
	if err := asController.Create(ctx, review); err != nil {
		t.Fatal(err)
	}
	user := review.Status.UserInfo
	if user.Username != "system:serviceaccount:kube-system:karpenter" || !slices.Contains(user.Groups, "system:serviceaccounts:kube-system") ||
		len(user.Extra["authentication.kubernetes.io/credential-id"]) == 0 {
		t.Errorf("the controller's kubeconfig authenticates as %+v; want the karpenter ServiceAccount by a token of its own", user)
	}

	if err := asController.List(ctx, &corev1.NodeList{}); err != nil {
		t.Errorf("listing Nodes, which the chart allows: %v", err)
	}
	// LKE mode's chart lets the controller read its webhook certificate's Secret and no other.
	if err := asController.List(ctx, &corev1.SecretList{}, client.InNamespace("kube-system")); !apierrors.IsForbidden(err) {
		t.Fatalf("listing kube-system's Secrets as the controller: %v; want forbidden", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for refusals = nil; len(refusals) == 0 && time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if refusals, err = cluster.ControllerRefusals(); err != nil {
			t.Fatal(err)
		}
	}
	if len(refusals) != 1 || !strings.HasPrefix(refusals[0], "list secrets kube-system/ by kube-system:karpenter: ") {
		t.Errorf("ControllerRefusals = %q; want the list of kube-system's Secrets", refusals)
	}
}
