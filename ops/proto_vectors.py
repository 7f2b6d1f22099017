"""Write the protobuf golden vectors: Go's own bytes and JSON for every object of the codec's test corpus.

Why this script exists: the strongest check of draplane's protobuf codec is
Kubernetes' own serializer. A small Go program (written to a temporary
directory; our own code) decodes each object of `tests.support.proto_corpus`
into its k8s.io/api type, and writes what k8s.io/apimachinery's protobuf
serializer makes of it (the enveloped bytes), its watch frame (length +
WatchEvent by the raw serializer, as kube-apiserver streams it) and Go's JSON
of the decoded object. Each object goes to the k8s.io/api release whose pool
the codec picks for it. ``tests/unit/protobuf/test_proto_golden.py`` checks
the codec against ``tests/data/protobuf/golden-<release>.json``.

    .venv/bin/python -m ops.proto_vectors      # needs Go; rewrites tests/data/protobuf/
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson

from ops.gen_proto import API_PACKAGES, RELEASES, go_module_dir
from services.api.protobuf.pools import pool_for
from tests.support import proto_corpus

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "data" / "protobuf"

GO_PROGRAM = r"""
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1beta1 "k8s.io/apimachinery/pkg/apis/meta/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/framer"
%(imports)s
)

type input struct {
	Name   string          `json:"name"`
	Object json.RawMessage `json:"object"`
}

type output struct {
	Name  string          `json:"name"`
	Error string          `json:"error,omitempty"`
	Proto string          `json:"proto,omitempty"`
	Frame string          `json:"frame,omitempty"`
	JSON  json.RawMessage `json:"json,omitempty"`
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func main() {
	scheme := runtime.NewScheme()
%(add)s
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Group: "meta.k8s.io", Version: "v1"})
	must(metav1.AddMetaToScheme(scheme))
	must(metav1beta1.AddMetaToScheme(scheme))
	enveloped := protobuf.NewSerializer(scheme, scheme)
	raw := protobuf.NewRawSerializer(scheme, scheme)

	data, err := os.ReadFile(os.Args[1])
	must(err)
	var inputs []input
	must(json.Unmarshal(data, &inputs))
	outs := []output{}
	for _, in := range inputs {
		out := output{Name: in.Name}
		var tm metav1.TypeMeta
		must(json.Unmarshal(in.Object, &tm))
		obj, err := scheme.New(schema.FromAPIVersionAndKind(tm.APIVersion, tm.Kind))
		if err == nil {
			err = json.Unmarshal(in.Object, obj)
		}
		var pb bytes.Buffer
		if err == nil {
			err = enveloped.Encode(obj, &pb)
		}
		var event bytes.Buffer
		if err == nil {
			err = raw.Encode(&metav1.WatchEvent{Type: "ADDED", Object: runtime.RawExtension{Raw: pb.Bytes()}}, &event)
		}
		var frame bytes.Buffer
		if err == nil {
			_, err = framer.NewLengthDelimitedFrameWriter(&frame).Write(event.Bytes())
		}
		// Go's JSON of the object as Go decodes the bytes (the TypeMeta of nested objects is not on the wire).
		var decoded runtime.Object
		if err == nil {
			decoded, _, err = enveloped.Decode(pb.Bytes(), nil, nil)
		}
		if err == nil {
			out.JSON, err = json.Marshal(decoded)
		}
		if err != nil {
			out.Error = err.Error()
		} else {
			out.Proto = base64.StdEncoding.EncodeToString(pb.Bytes())
			out.Frame = base64.StdEncoding.EncodeToString(frame.Bytes())
		}
		outs = append(outs, out)
	}
	must(json.NewEncoder(os.Stdout).Encode(outs))
}
"""


def run_go(release: str, entries: list[tuple[str, dict[str, Any]]], *, scratch: Path) -> list[dict[str, Any]]:
    api = go_module_dir("k8s.io/api", release)
    imports, adds = [], []
    for i, pkg in enumerate(p for p in API_PACKAGES if (api / p / "generated.proto").exists()):
        imports.append(f'\tp{i} "k8s.io/api/{pkg}"')
        adds.append(f"\tmust(p{i}.AddToScheme(scheme))")
    src = scratch / "vectors"
    src.mkdir()
    (src / "main.go").write_text(GO_PROGRAM % {"imports": "\n".join(imports), "add": "\n".join(adds)})
    (src / "go.mod").write_text(
        f"module draplane.io/protovectors\n\ngo 1.22\n\nrequire (\n\tk8s.io/api {release}\n"
        f"\tk8s.io/apimachinery {release}\n)\n"
    )
    inputs = scratch / "inputs.json"
    # Compact, as clients send it: Go keeps a RawExtension's bytes as they came.
    inputs.write_bytes(orjson.dumps([{"name": n, "object": o} for n, o in entries]))
    env = {**os.environ, "GOFLAGS": "-mod=mod"}
    subprocess.run(["go", "mod", "tidy"], cwd=src, check=True, env=env)
    out = subprocess.run(["go", "run", ".", str(inputs)], cwd=src, check=True, capture_output=True, env=env).stdout
    results: list[dict[str, Any]] = json.loads(out)
    return results


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    by_release: dict[str, list[tuple[str, dict[str, Any]]]] = {r: [] for r in RELEASES}
    for name, obj in proto_corpus.objects():
        found = pool_for(obj["apiVersion"], obj["kind"])
        if found is None:
            raise SystemExit(f"proto_vectors: no message for {name}")
        by_release[found[0].release].append((name, obj))
    for release, entries in by_release.items():
        with tempfile.TemporaryDirectory(prefix="draplane-vectors-") as tmp:
            results = run_go(release, entries, scratch=Path(tmp))
        vectors = []
        for (name, obj), result in zip(entries, results, strict=True):
            if result.get("error"):
                raise SystemExit(f"proto_vectors: Go could not encode {name}: {result['error']}")
            vectors.append(
                {
                    "name": name,
                    "input": obj,
                    "json": result["json"],
                    "proto": result["proto"],
                    "frame": result["frame"],
                }
            )
            base64.b64decode(result["proto"])  # well-formed
        path = OUT / f"golden-{release}.json"
        # One vector a line: diffs stay readable, the file small.
        lines = ",\n".join(json.dumps(v, separators=(",", ":")) for v in vectors)
        path.write_text(f'{{"k8s.io/api":"{release}","vectors":[\n{lines}\n]}}\n')
        print(f"proto_vectors: {len(vectors)} vectors from k8s.io/api {release} in {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
