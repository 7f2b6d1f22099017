"""The node agent: a kubelet-lite that registers its Node and runs the pods bound to it.

It does not run containers. It does what kubelet does around DRA: it checks
that every claim of a pod is reserved for the pod, asks the drivers (over
their plugin sockets) to prepare the claims, reports the pod Running with the
CDI device ids each container gets, completes pods that ask for a run time,
and on graceful deletion stops the pod, unprepares claims no other pod on the
node uses and finalizes the deletion. `agent` holds the service; `command`
its ``draplane nodeagent`` command line. Pure modules: `node_object`,
`pod_status`, `pod_claims`.
"""
