"""The codec's errors, worded as kube-apiserver's protobuf serializer words them.

Why a module of their own: the HTTP layer turns a `ProtobufDecodeError` into a
400 (kube-apiserver's ``transformDecodeError``) and an `UnsupportedKindError`
into a 406/415, so it catches these types without knowing the codec's inside.
"""

from __future__ import annotations

__all__ = ["ProtobufDecodeError", "ProtobufEncodeError", "ProtobufError", "UnsupportedKindError"]

# What kube-apiserver expects in front of every enveloped message (k8s.io/apimachinery's protobuf serializer).
MAGIC = b"k8s\x00"
# Go prints the prefix as a byte slice: fmt's %v of []byte("k8s\x00").
MAGIC_TEXT = "[" + " ".join(str(b) for b in MAGIC) + "]"


class ProtobufError(ValueError):
    """Anything the protobuf codec cannot do."""


class UnsupportedKindError(ProtobufError):
    """No protobuf message exists for an apiVersion/kind (Tables, kinds Kubernetes does not have)."""

    def __init__(self, api_version: str, kind: str) -> None:
        self.api_version = api_version
        self.kind = kind
        version = api_version.rpartition("/")[2] or "unknown"
        # k8s.io/apimachinery/pkg/runtime/serializer/protobuf: errNotMarshalable.
        super().__init__(
            f"object *{version}.{kind} does not implement the protobuf marshalling interface and cannot be "
            "encoded to a protobuf message"
        )


class ProtobufEncodeError(ProtobufError):
    """An object whose field holds a value its message cannot (a string where an integer belongs, ...)."""


class ProtobufDecodeError(ProtobufError):
    """Bytes that are not an enveloped Kubernetes protobuf message.

    ``str(error)`` is the text kube-apiserver's serializer returns for the same
    bytes (``empty data``, ``provided data does not appear to be a protobuf
    message, expected prefix [107 56 115 0]``, ...); ``api_version`` and
    ``kind`` are what the envelope named, when it could be read, for the
    HTTP layer's ``<Kind> in version "<v>" cannot be handled as a ...``.
    """

    def __init__(self, message: str, *, api_version: str = "", kind: str = "") -> None:
        super().__init__(message)
        self.api_version = api_version
        self.kind = kind
