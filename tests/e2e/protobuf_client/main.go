// A client-go v0.31 program speaking protobuf to a draplane apiserver, as
// kube-scheduler and kube-controller-manager do by default
// (ContentType: application/vnd.kubernetes.protobuf). Run by
// tests/e2e/test_protobuf_client_go.py; it is built in a temporary module, not
// part of draplane.
//
//	protobuf_client <kubeconfig> <namespace>
//
// It creates, gets, lists, watches, updates, patches, binds and deletes a Pod
// and a ResourceClaim (resource.k8s.io/v1alpha3, what client-go 0.31 speaks),
// lists PartialObjectMetadata as the garbage collector does, checks that errors
// decode (NotFound, Conflict), and checks that every response was protobuf.
// The last line of its output is "OK <n> protobuf responses"; any failure
// exits 1 with the reason.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/clientcmd"
)

const protobuf = "application/vnd.kubernetes.protobuf"

// responses keeps the Content-Type of every response, by request.
type responses struct {
	mu   sync.Mutex
	seen []string
}

// recorder is one transport's wrapper writing to the shared log.
type recorder struct {
	log   *responses
	inner http.RoundTripper
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.inner.RoundTrip(req)
	if err == nil {
		r.log.mu.Lock()
		r.log.seen = append(r.log.seen, fmt.Sprintf("%s %s -> %d %s (sent %s)", req.Method, req.URL.Path,
			resp.StatusCode, resp.Header.Get("Content-Type"), req.Header.Get("Content-Type")))
		r.log.mu.Unlock()
	}
	return resp, err
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "FAIL: "+format+"\n", args...)
	os.Exit(1)
}

func must(err error, what string) {
	if err != nil {
		fail("%s: %v", what, err)
	}
}

func nextEvent(w watch.Interface, want watch.EventType, name string) {
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				fail("watch ended before %s %s", want, name)
			}
			if ev.Type == watch.Error {
				fail("watch error event: %v", apierrors.FromObject(ev.Object))
			}
			obj, err := metaOf(ev.Object)
			must(err, "watch event object")
			if ev.Type == want && obj.GetName() == name {
				return
			}
		case <-timeout:
			fail("no %s event for %s", want, name)
		}
	}
}

func metaOf(obj any) (metav1.Object, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("%T has no metadata", obj)
	}
	return m, nil
}

func main() {
	if len(os.Args) != 3 {
		fail("usage: protobuf_client <kubeconfig> <namespace>")
	}
	config, err := clientcmd.BuildConfigFromFlags("", os.Args[1])
	must(err, "kubeconfig")
	config.ContentType = protobuf // kube-scheduler's and kube-controller-manager's default
	rec := &responses{}
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &recorder{log: rec, inner: rt} })
	client, err := kubernetes.NewForConfig(config)
	must(err, "client")
	ns := os.Args[2]
	ctx := context.Background()

	// ---- Pods
	pods := client.CoreV1().Pods(ns)
	list, err := pods.List(ctx, metav1.ListOptions{})
	must(err, "list pods")
	w, err := pods.Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true})
	must(err, "watch pods")
	defer w.Stop()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pb-pod", Labels: map[string]string{"app": "pb"}},
		Spec: corev1.PodSpec{
			SchedulerName: "protobuf-e2e", // no scheduler of the stack binds it: this client does
			Containers:    []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		},
	}
	created, err := pods.Create(ctx, pod, metav1.CreateOptions{})
	must(err, "create pod")
	if created.UID == "" || created.ResourceVersion == "" || created.Namespace != ns {
		fail("created pod lacks uid/resourceVersion/namespace: %+v", created.ObjectMeta)
	}
	nextEvent(w, watch.Added, "pb-pod")
	got, err := pods.Get(ctx, "pb-pod", metav1.GetOptions{})
	must(err, "get pod")
	if got.Spec.Containers[0].Image != "registry.k8s.io/pause:3.10" || got.UID != created.UID {
		fail("got a different pod: %+v", got)
	}
	got.Labels["updated"] = "yes"
	updated, err := pods.Update(ctx, got, metav1.UpdateOptions{})
	must(err, "update pod")
	nextEvent(w, watch.Modified, "pb-pod")
	got.ResourceVersion = created.ResourceVersion // stale
	if _, err := pods.Update(ctx, got, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		fail("a stale update: want Conflict, got %v", err)
	}
	patched, err := pods.Patch(ctx, "pb-pod", types.MergePatchType, []byte(`{"metadata":{"labels":{"patched":"yes"}}}`),
		metav1.PatchOptions{})
	must(err, "patch pod")
	if patched.Labels["updated"] != "yes" || patched.Labels["patched"] != "yes" {
		fail("patch lost labels: %v", patched.Labels)
	}
	updated.Status.Conditions = []corev1.PodCondition{{Type: "PodReadyToStartContainers", Status: corev1.ConditionFalse}}
	updated.ResourceVersion = patched.ResourceVersion
	_, err = pods.UpdateStatus(ctx, updated, metav1.UpdateOptions{})
	must(err, "update pod status")
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	must(err, "list nodes")
	if len(nodes.Items) == 0 {
		fail("the stack has no nodes")
	}
	binding := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: "pb-pod"},
		Target:     corev1.ObjectReference{Kind: "Node", Name: nodes.Items[0].Name},
	}
	must(pods.Bind(ctx, binding, metav1.CreateOptions{}), "bind pod")
	bound, err := pods.Get(ctx, "pb-pod", metav1.GetOptions{})
	must(err, "get bound pod")
	if bound.Spec.NodeName != binding.Target.Name {
		fail("binding did not set nodeName: %q", bound.Spec.NodeName)
	}
	if _, err := pods.Get(ctx, "absent", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		fail("get of an absent pod: want NotFound, got %v", err)
	}

	// ---- metadata-only lists, as the garbage collector's metadata informers read
	meta, err := metadata.NewForConfig(config)
	must(err, "metadata client")
	partial, err := meta.Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}).Namespace(ns).
		List(ctx, metav1.ListOptions{LabelSelector: "app=pb"})
	must(err, "metadata list")
	if len(partial.Items) != 1 || partial.Items[0].Name != "pb-pod" || partial.Items[0].Labels["patched"] != "yes" {
		fail("metadata list: %+v", partial.Items)
	}

	// ---- ResourceClaims
	claims := client.ResourceV1alpha3().ResourceClaims(ns)
	claim := &resourcev1alpha3.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "pb-claim"},
		Spec: resourcev1alpha3.ResourceClaimSpec{Devices: resourcev1alpha3.DeviceClaim{
			Requests: []resourcev1alpha3.DeviceRequest{{Name: "gpu", DeviceClassName: "gpu.example.com"}},
		}},
	}
	cw, err := claims.Watch(ctx, metav1.ListOptions{})
	must(err, "watch claims")
	defer cw.Stop()
	createdClaim, err := claims.Create(ctx, claim, metav1.CreateOptions{})
	must(err, "create claim")
	nextEvent(cw, watch.Added, "pb-claim")
	gotClaim, err := claims.Get(ctx, "pb-claim", metav1.GetOptions{})
	must(err, "get claim")
	if gotClaim.UID != createdClaim.UID || gotClaim.Spec.Devices.Requests[0].DeviceClassName != "gpu.example.com" {
		fail("got a different claim: %+v", gotClaim)
	}
	claimList, err := claims.List(ctx, metav1.ListOptions{})
	must(err, "list claims")
	if len(claimList.Items) != 1 {
		fail("claim list: %d items", len(claimList.Items))
	}
	gotClaim.Annotations = map[string]string{"updated": "yes"}
	_, err = claims.Update(ctx, gotClaim, metav1.UpdateOptions{})
	must(err, "update claim")
	nextEvent(cw, watch.Modified, "pb-claim")
	zero := int64(0)
	must(claims.Delete(ctx, "pb-claim", metav1.DeleteOptions{GracePeriodSeconds: &zero}), "delete claim")
	nextEvent(cw, watch.Deleted, "pb-claim")
	if _, err := claims.Get(ctx, "pb-claim", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		fail("get of a deleted claim: want NotFound, got %v", err)
	}

	// ---- delete the pod with a DeleteOptions body
	background := metav1.DeletePropagationBackground
	must(pods.Delete(ctx, "pb-pod", metav1.DeleteOptions{GracePeriodSeconds: &zero, PropagationPolicy: &background}),
		"delete pod")
	nextEvent(w, watch.Deleted, "pb-pod")

	// ---- every response was protobuf; every body sent was protobuf (or a JSON patch)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	n := 0
	for _, line := range rec.seen {
		fmt.Println(line)
		if !strings.Contains(line, "-> ") {
			continue
		}
		answered := strings.SplitN(strings.SplitN(line, "-> ", 2)[1], " (sent", 2)[0]
		if !strings.Contains(answered, protobuf) {
			fail("a response that is not protobuf: %s", line)
		}
		n++
	}
	fmt.Printf("OK %d protobuf responses\n", n)
}
