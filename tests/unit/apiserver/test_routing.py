"""Resource URLs parse into the route Kubernetes' request-info would produce."""

from __future__ import annotations

import pytest

from services.api.machinery.status import StatusError
from services.apiserver.http.routing import GroupVersion, ResourceRoute, parse


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/api/v1/pods", ("pods", None, None, None, False)),
        ("/api/v1/namespaces/ns/pods", ("pods", "ns", None, None, False)),
        ("/api/v1/namespaces/ns/pods/p", ("pods", "ns", "p", None, False)),
        ("/api/v1/namespaces/ns/pods/p/status", ("pods", "ns", "p", "status", False)),
        ("/api/v1/namespaces/ns/pods/p/binding", ("pods", "ns", "p", "binding", False)),
        ("/api/v1/namespaces/ns/pods/p/log", ("pods", "ns", "p", "log", False)),
        ("/api/v1/namespaces/ns/pods/p/exec", ("pods", "ns", "p", "exec", False)),
        ("/api/v1/namespaces/ns/pods/p/attach", ("pods", "ns", "p", "attach", False)),
        ("/api/v1/namespaces/ns/pods/p/portforward", ("pods", "ns", "p", "portforward", False)),
        ("/api/v1/namespaces/kube-system/services", ("services", "kube-system", None, None, False)),
        ("/api/v1/services", ("services", None, None, None, False)),
        ("/api/v1/namespaces", ("namespaces", None, None, None, False)),
        ("/api/v1/namespaces/ns", ("namespaces", None, "ns", None, False)),
        ("/api/v1/namespaces/ns/status", ("namespaces", None, "ns", "status", False)),
        ("/api/v1/nodes/n1/status", ("nodes", None, "n1", "status", False)),
        ("/api/v1/watch/namespaces/ns/pods", ("pods", "ns", None, None, True)),
        ("/api/v1/watch/namespaces/ns/pods/p", ("pods", "ns", "p", None, True)),
        ("/apis/resource.k8s.io/v1alpha3/resourceslices", ("resourceslices", None, None, None, False)),
        (
            "/apis/resource.k8s.io/v1alpha3/namespaces/ns/resourceclaims/c/status",
            ("resourceclaims", "ns", "c", "status", False),
        ),
        ("/apis/resource.k8s.io/v1alpha3/deviceclasses/gpu/", ("deviceclasses", None, "gpu", None, False)),
    ],
)
def test_resource_routes(path: str, expected: tuple[object, ...]) -> None:
    route = parse(path)
    assert isinstance(route, ResourceRoute)
    assert (route.rt.plural, route.namespace, route.name, route.subresource, route.watch_path) == expected


@pytest.mark.parametrize(
    "path",
    [
        "/api/v2/pods",
        "/api/v1/widgets",
        "/apis/resource.k8s.io/v1beta9/resourceclaims",
        "/apis/example.com/v1/things",
        "/api/v1/namespaces/ns/pods/p/proxy",
        "/api/v1/namespaces/ns/pods/p/eviction",
        "/api/v1/watch/namespaces/ns/pods/p/log",
        "/api/v1/namespaces/ns/configmaps/c/status",
        "/api/v1/namespaces/ns/nodes/n1",
        "/api/v1/pods/p",
        "/apis/resource.k8s.io/v1alpha3/resourceslices/s/status",
        "/api/v1/namespaces/ns/pods/p/status/extra",
        "/apis/example.com",
    ],
)
def test_unknown_paths_are_404(path: str) -> None:
    with pytest.raises(StatusError) as err:
        parse(path)
    assert err.value.code == 404
    assert err.value.status["message"] == "the server could not find the requested resource"


def test_group_version_and_non_api_paths() -> None:
    assert parse("/api/v1") == GroupVersion("", "v1")
    assert parse("/apis/resource.k8s.io") == GroupVersion("resource.k8s.io", None)
    assert parse("/apis/resource.k8s.io/v1alpha3") == GroupVersion("resource.k8s.io", "v1alpha3")
    assert parse("/api") is None
    assert parse("/apis") is None
    assert parse("/version") is None
