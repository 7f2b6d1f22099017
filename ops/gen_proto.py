"""Build the protobuf descriptors of Kubernetes' API from k8s.io/api and k8s.io/apimachinery's generated.proto.

Why this script exists: Kubernetes' protobuf wire format is defined by the
``generated.proto`` files of its Go modules. draplane's codec
(`services.api.protobuf`) builds its message classes at run time from
serialized ``FileDescriptorSet`` s compiled from those files (protoc, from
``grpcio-tools``), one per k8s.io/api release, so that at run time only the
``protobuf`` runtime is needed — no protoc, no Go.

The .proto files cannot say two things the codec needs to read and write
exactly what Go does: which Go fields are pointers (a non-pointer field is
always on the wire, a nil pointer never) and each field's JSON name,
``omitempty`` and ``omitzero`` (what Go's JSON shows for a zero value). A small Go program
(written to a temporary directory, our own code) reads them from the Go
structs' ``json`` and ``protobuf`` tags by reflection and writes one field
table per release beside the descriptors.

    .venv/bin/python -m ops.gen_proto          # rewrite services/api/protobuf/descriptors/

Needs Go (the modules come from the Go module proxy) and ``grpcio-tools``
(the test extras). ``descriptors/manifest.json`` records the module versions.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "services" / "api" / "protobuf" / "descriptors"

# One descriptor pool per k8s.io/api release: 1.31 (resource.k8s.io/v1alpha3) and 1.37 (v1, v1beta2, v1beta1).
RELEASES = ("v0.31.14", "v0.37.2")
# The API packages whose messages draplane serves (those a release lacks are skipped).
API_PACKAGES = (
    "core/v1",
    "apps/v1",
    "policy/v1",
    "storage/v1",
    "coordination/v1",
    "events/v1",
    "authentication/v1",
    "authorization/v1",
    "apidiscovery/v2",
    "apidiscovery/v2beta1",
    "resource/v1",
    "resource/v1beta2",
    "resource/v1beta1",
    "resource/v1alpha3",
)
MACHINERY_PACKAGES = (
    "pkg/apis/meta/v1",
    "pkg/apis/meta/v1beta1",
    "pkg/runtime",
    "pkg/runtime/schema",
    "pkg/api/resource",
    "pkg/util/intstr",
)

GO_PROGRAM = r"""
package main

import (
	"encoding/json"
	"os"
	"reflect"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
%(imports)s
)

// One protobuf field of a Go struct: its number, JSON name, omitempty, inline, and how Go holds it.
type field struct {
	Num       int    `json:"num"`
	JSON      string `json:"json"`
	OmitEmpty bool   `json:"omitempty,omitempty"`
	OmitZero  bool   `json:"omitzero,omitempty"`
	Inline    bool   `json:"inline,omitempty"`
	// value (always on the wire), pointer, list, map, bytes, wrapped (a named slice sent as a message)
	Hold string `json:"hold"`
	// for a map: how Go holds the value (value or wrapped)
	MapValue string `json:"mapValue,omitempty"`
}

// Special types: their JSON is their own, the codec knows them by message name.
var special = map[string]bool{
	"k8s.io.apimachinery.pkg.apis.meta.v1.Time":      true,
	"k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime": true,
	"k8s.io.apimachinery.pkg.apis.meta.v1.Duration":  true,
	"k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1":  true,
	"k8s.io.apimachinery.pkg.api.resource.Quantity":  true,
	"k8s.io.apimachinery.pkg.util.intstr.IntOrString": true,
	"k8s.io.apimachinery.pkg.runtime.RawExtension":   true,
}

func messageName(t reflect.Type) string {
	return strings.ReplaceAll(t.PkgPath(), "/", ".") + "." + t.Name()
}

func hold(t reflect.Type, tag string) string {
	switch t.Kind() {
	case reflect.Ptr:
		return "pointer"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "bytes"
		}
		if t.Name() != "" && !strings.Contains(tag, ",rep,") {
			return "wrapped"
		}
		return "list"
	case reflect.Map:
		return "map"
	}
	return "value"
}

func main() {
	tables := map[string][]field{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Ptr || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || !strings.HasPrefix(t.PkgPath(), "k8s.io/") {
			return
		}
		name := messageName(t)
		if _, seen := tables[name]; seen || special[name] {
			return
		}
		fields := []field{}
		tables[name] = fields
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag, ok := f.Tag.Lookup("protobuf")
			if !ok || tag == "-" {
				continue
			}
			parts := strings.Split(tag, ",")
			num, err := strconv.Atoi(parts[1])
			if err != nil {
				panic(err)
			}
			js := strings.Split(f.Tag.Get("json"), ",")
			fl := field{Num: num, JSON: js[0], Hold: hold(f.Type, tag)}
			for _, opt := range js[1:] {
				fl.OmitEmpty = fl.OmitEmpty || opt == "omitempty"
				fl.OmitZero = fl.OmitZero || opt == "omitzero"
				fl.Inline = fl.Inline || opt == "inline"
			}
			if f.Type.Kind() == reflect.Map {
				fl.MapValue = hold(f.Type.Elem(), ",rep,")
				if f.Type.Elem().Kind() == reflect.Slice && f.Type.Elem().Name() != "" {
					fl.MapValue = "wrapped"
				}
			}
			fields = append(fields, fl)
			tables[name] = fields
			walk(f.Type)
		}
	}
	scheme := runtime.NewScheme()
%(add)s
	for _, t := range scheme.AllKnownTypes() {
		walk(t)
	}
	for _, obj := range []any{
		metav1.Status{}, metav1.WatchEvent{}, metav1.PartialObjectMetadata{}, metav1.PartialObjectMetadataList{},
		metav1.DeleteOptions{}, metav1.ListOptions{}, metav1.GetOptions{}, metav1.CreateOptions{},
		metav1.PatchOptions{}, metav1.UpdateOptions{}, metav1.APIGroupList{}, metav1.APIGroup{},
		metav1.APIResourceList{}, metav1.APIVersions{}, metav1beta1.PartialObjectMetadataList{}, runtime.Unknown{},
	} {
		walk(reflect.TypeOf(obj))
	}
	out, err := json.MarshalIndent(tables, "", " ")
	if err != nil {
		panic(err)
	}
	os.Stdout.Write(out)
}
"""


def go_module_dir(module: str, version: str) -> Path:
    """The unpacked module in Go's module cache (downloaded from the module proxy when missing)."""
    out = subprocess.run(
        ["go", "mod", "download", "-json", f"{module}@{version}"], check=True, capture_output=True, text=True
    ).stdout
    return Path(json.loads(out)["Dir"])


def proto_sources(api: Path, machinery: Path) -> list[str]:
    files = [f"k8s.io/apimachinery/{p}/generated.proto" for p in MACHINERY_PACKAGES]
    files += [f"k8s.io/api/{p}/generated.proto" for p in API_PACKAGES if (api / p / "generated.proto").exists()]
    return files


def compile_descriptors(api: Path, machinery: Path, *, into: Path, scratch: Path) -> None:
    """protoc over the release's generated.proto files into one FileDescriptorSet with its imports."""
    from grpc_tools import protoc

    include = scratch / "include" / "k8s.io"
    include.mkdir(parents=True)
    (include / "api").symlink_to(api)
    (include / "apimachinery").symlink_to(machinery)
    args = ["protoc", f"-I{scratch / 'include'}", "--include_imports", f"--descriptor_set_out={into}"]
    if protoc.main([*args, *proto_sources(api, machinery)]) != 0:
        raise SystemExit(f"protoc failed for {api}")


def field_tables(release: str, api: Path, *, scratch: Path) -> dict[str, list[dict[str, object]]]:
    """The Go program's field tables for every message reachable from the release's served kinds."""
    imports, adds = [], []
    for i, pkg in enumerate(p for p in API_PACKAGES if (api / p / "generated.proto").exists()):
        imports.append(f'\tp{i} "k8s.io/api/{pkg}"')
        adds.append(f"\tif err := p{i}.AddToScheme(scheme); err != nil {{\n\t\tpanic(err)\n\t}}")
    src = scratch / "tables"
    src.mkdir()
    (src / "main.go").write_text(GO_PROGRAM % {"imports": "\n".join(imports), "add": "\n".join(adds)})
    (src / "go.mod").write_text(
        f"module draplane.io/prototables\n\ngo 1.22\n\nrequire (\n\tk8s.io/api {release}\n"
        f"\tk8s.io/apimachinery {release}\n)\n"
    )
    env = {**os.environ, "GOFLAGS": "-mod=mod"}
    subprocess.run(["go", "mod", "tidy"], cwd=src, check=True, env=env)
    out = subprocess.run(["go", "run", "."], cwd=src, check=True, capture_output=True, env=env).stdout
    tables: dict[str, list[dict[str, object]]] = json.loads(out)
    return dict(sorted(tables.items()))


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    pools = []
    for release in RELEASES:
        api = go_module_dir("k8s.io/api", release)
        machinery = go_module_dir("k8s.io/apimachinery", release)
        with tempfile.TemporaryDirectory(prefix="draplane-proto-") as tmp:
            scratch = Path(tmp)
            descriptors = f"k8s-api-{release}.binpb"
            compile_descriptors(api, machinery, into=OUT / descriptors, scratch=scratch)
            fields = f"k8s-api-{release}.fields.json"
            tables = field_tables(release, api, scratch=scratch)
            (OUT / fields).write_text(json.dumps(tables, indent=0, sort_keys=True) + "\n")
        pools.append(
            {
                "k8s.io/api": release,
                "k8s.io/apimachinery": release,
                "descriptors": descriptors,
                "fields": fields,
            }
        )
        print(f"gen_proto: {release}: {len(tables)} Go structs", file=sys.stderr)
    # Newest release first: the codec picks, per message, the newest pool that has it.
    manifest = {"generator": "ops/gen_proto.py", "pools": pools[::-1]}
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
