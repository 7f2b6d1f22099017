"""Kubernetes' protobuf wire format (``application/vnd.kubernetes.protobuf``) for every kind draplane serves.

Why this package exists: kube-scheduler, kube-controller-manager and other
client-go programs speak protobuf by default. The message classes are built
from k8s.io/api's and k8s.io/apimachinery's ``generated.proto`` (descriptor
sets compiled by ``ops/gen_proto.py``, one pool per release), and one generic
walk converts them to and from draplane's JSON-shaped dicts. Pure: no I/O
beyond reading the committed descriptors once. docs/decisions/protobuf.md.

- `encode` / `decode`: an object with Kubernetes' envelope (``k8s\\x00`` +
  ``runtime.Unknown``).
- `supports`: whether an apiVersion/kind has a message.
- `encode_watch_frame` / `decode_watch_frames`: the protobuf watch stream.
- `encode_message`, `enveloped`, `encode_list_message`, `watch_frame`: the same
  bytes from message bytes already encoded (a server encodes each object
  version once and reuses the bytes).
"""

from services.api.protobuf.envelope import (
    decode,
    decode_message,
    decode_watch_frames,
    encode,
    encode_list_message,
    encode_message,
    encode_watch_frame,
    enveloped,
    supports,
    watch_frame,
)
from services.api.protobuf.errors import (
    MAGIC,
    ProtobufDecodeError,
    ProtobufEncodeError,
    ProtobufError,
    UnsupportedKindError,
)

__all__ = [
    "MAGIC",
    "ProtobufDecodeError",
    "ProtobufEncodeError",
    "ProtobufError",
    "UnsupportedKindError",
    "decode",
    "decode_message",
    "decode_watch_frames",
    "encode",
    "encode_list_message",
    "encode_message",
    "encode_watch_frame",
    "enveloped",
    "supports",
    "watch_frame",
]
