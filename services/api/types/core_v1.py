"""core/v1 types draplane serves: Namespace, Node, Pod, Binding and Event (k8s.io/api/core/v1, 1.31).

Why this module exists: real-world manifests must be accepted under strict
field validation and stored without loss, so every field Kubernetes 1.31 has
on these kinds is known here — including the ones draplane never reads
(volumes, probes, security contexts, ...). Class names are the Go type names;
they appear in decode error messages.
"""

from __future__ import annotations

import msgspec

from services.api.types.base import Int32, Int64, IntOrString, K8sStruct, MicroTime, Quantity, ResourceList, Time
from services.api.types.meta import LabelSelector, ObjectMeta

# --------------------------------------------------------------------------
# Small shared references


class LocalObjectReference(K8sStruct):
    name: str | None = None


class ObjectReference(K8sStruct):
    kind: str | None = None
    namespace: str | None = None
    name: str | None = None
    uid: str | None = None
    api_version: str | None = None
    resource_version: str | None = None
    field_path: str | None = None


class TypedLocalObjectReference(K8sStruct):
    api_group: str | None = None
    kind: str | None = None
    name: str | None = None


class TypedObjectReference(K8sStruct):
    api_group: str | None = None
    kind: str | None = None
    name: str | None = None
    namespace: str | None = None


# --------------------------------------------------------------------------
# Node selection (also used by resource.k8s.io)


class NodeSelectorRequirement(K8sStruct):
    key: str | None = None
    operator: str | None = None
    values: list[str] | None = None


class NodeSelectorTerm(K8sStruct):
    match_expressions: list[NodeSelectorRequirement] | None = None
    match_fields: list[NodeSelectorRequirement] | None = None


class NodeSelector(K8sStruct):
    node_selector_terms: list[NodeSelectorTerm] | None = None


class PreferredSchedulingTerm(K8sStruct):
    weight: Int32 | None = None
    preference: NodeSelectorTerm | None = None


class NodeAffinity(K8sStruct):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] | None = None


class PodAffinityTerm(K8sStruct):
    label_selector: LabelSelector | None = None
    namespaces: list[str] | None = None
    topology_key: str | None = None
    namespace_selector: LabelSelector | None = None
    match_label_keys: list[str] | None = None
    mismatch_label_keys: list[str] | None = None


class WeightedPodAffinityTerm(K8sStruct):
    weight: Int32 | None = None
    pod_affinity_term: PodAffinityTerm | None = None


class PodAffinity(K8sStruct):
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] | None = None
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] | None = None


class PodAntiAffinity(K8sStruct):
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] | None = None
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] | None = None


class Affinity(K8sStruct):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAntiAffinity | None = None


class Toleration(K8sStruct):
    key: str | None = None
    operator: str | None = None
    value: str | None = None
    effect: str | None = None
    toleration_seconds: Int64 | None = None


class Taint(K8sStruct):
    key: str | None = None
    value: str | None = None
    effect: str | None = None
    time_added: Time | None = None


class TopologySpreadConstraint(K8sStruct):
    max_skew: Int32 | None = None
    topology_key: str | None = None
    when_unsatisfiable: str | None = None
    label_selector: LabelSelector | None = None
    min_domains: Int32 | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] | None = None


# --------------------------------------------------------------------------
# Containers


class ContainerPort(K8sStruct):
    name: str | None = None
    host_port: Int32 | None = None
    container_port: Int32 | None = None
    protocol: str | None = None
    host_ip: str | None = msgspec.field(default=None, name="hostIP")


class ConfigMapEnvSource(K8sStruct):
    name: str | None = None
    optional: bool | None = None


class SecretEnvSource(K8sStruct):
    name: str | None = None
    optional: bool | None = None


class EnvFromSource(K8sStruct):
    prefix: str | None = None
    config_map_ref: ConfigMapEnvSource | None = None
    secret_ref: SecretEnvSource | None = None


class ObjectFieldSelector(K8sStruct):
    api_version: str | None = None
    field_path: str | None = None


class ResourceFieldSelector(K8sStruct):
    container_name: str | None = None
    resource: str | None = None
    divisor: Quantity | None = None


class ConfigMapKeySelector(K8sStruct):
    name: str | None = None
    key: str | None = None
    optional: bool | None = None


class SecretKeySelector(K8sStruct):
    name: str | None = None
    key: str | None = None
    optional: bool | None = None


class EnvVarSource(K8sStruct):
    field_ref: ObjectFieldSelector | None = None
    resource_field_ref: ResourceFieldSelector | None = None
    config_map_key_ref: ConfigMapKeySelector | None = None
    secret_key_ref: SecretKeySelector | None = None


class EnvVar(K8sStruct):
    name: str | None = None
    value: str | None = None
    value_from: EnvVarSource | None = None


class ResourceClaim(K8sStruct):
    """A container's reference to one of the pod's resource claims (``resources.claims[]``)."""

    name: str | None = None
    request: str | None = None


class ResourceRequirements(K8sStruct):
    limits: ResourceList | None = None
    requests: ResourceList | None = None
    claims: list[ResourceClaim] | None = None


class ContainerResizePolicy(K8sStruct):
    resource_name: str | None = None
    restart_policy: str | None = None


class VolumeMount(K8sStruct):
    name: str | None = None
    read_only: bool | None = None
    recursive_read_only: str | None = None
    mount_path: str | None = None
    sub_path: str | None = None
    mount_propagation: str | None = None
    sub_path_expr: str | None = None


class VolumeDevice(K8sStruct):
    name: str | None = None
    device_path: str | None = None


class ExecAction(K8sStruct):
    command: list[str] | None = None


class HTTPHeader(K8sStruct):
    name: str | None = None
    value: str | None = None


class HTTPGetAction(K8sStruct):
    path: str | None = None
    port: IntOrString | None = None
    host: str | None = None
    scheme: str | None = None
    http_headers: list[HTTPHeader] | None = None


class TCPSocketAction(K8sStruct):
    port: IntOrString | None = None
    host: str | None = None


class GRPCAction(K8sStruct):
    port: Int32 | None = None
    service: str | None = None


class SleepAction(K8sStruct):
    seconds: Int64 | None = None


class Probe(K8sStruct):
    exec: ExecAction | None = None
    http_get: HTTPGetAction | None = None
    tcp_socket: TCPSocketAction | None = None
    grpc: GRPCAction | None = None
    initial_delay_seconds: Int32 | None = None
    timeout_seconds: Int32 | None = None
    period_seconds: Int32 | None = None
    success_threshold: Int32 | None = None
    failure_threshold: Int32 | None = None
    termination_grace_period_seconds: Int64 | None = None


class LifecycleHandler(K8sStruct):
    exec: ExecAction | None = None
    http_get: HTTPGetAction | None = None
    tcp_socket: TCPSocketAction | None = None
    sleep: SleepAction | None = None


class Lifecycle(K8sStruct):
    post_start: LifecycleHandler | None = None
    pre_stop: LifecycleHandler | None = None


class Capabilities(K8sStruct):
    add: list[str] | None = None
    drop: list[str] | None = None


class SELinuxOptions(K8sStruct):
    user: str | None = None
    role: str | None = None
    type: str | None = None
    level: str | None = None


class WindowsSecurityContextOptions(K8sStruct):
    gmsa_credential_spec_name: str | None = None
    gmsa_credential_spec: str | None = None
    run_as_user_name: str | None = None
    host_process: bool | None = None


class SeccompProfile(K8sStruct):
    type: str | None = None
    localhost_profile: str | None = None


class AppArmorProfile(K8sStruct):
    type: str | None = None
    localhost_profile: str | None = None


class SecurityContext(K8sStruct):
    capabilities: Capabilities | None = None
    privileged: bool | None = None
    se_linux_options: SELinuxOptions | None = None
    windows_options: WindowsSecurityContextOptions | None = None
    run_as_user: Int64 | None = None
    run_as_group: Int64 | None = None
    run_as_non_root: bool | None = None
    read_only_root_filesystem: bool | None = None
    allow_privilege_escalation: bool | None = None
    proc_mount: str | None = None
    seccomp_profile: SeccompProfile | None = None
    app_armor_profile: AppArmorProfile | None = None


class Container(K8sStruct):
    name: str | None = None
    image: str | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    working_dir: str | None = None
    ports: list[ContainerPort] | None = None
    env_from: list[EnvFromSource] | None = None
    env: list[EnvVar] | None = None
    resources: ResourceRequirements | None = None
    resize_policy: list[ContainerResizePolicy] | None = None
    restart_policy: str | None = None
    volume_mounts: list[VolumeMount] | None = None
    volume_devices: list[VolumeDevice] | None = None
    liveness_probe: Probe | None = None
    readiness_probe: Probe | None = None
    startup_probe: Probe | None = None
    lifecycle: Lifecycle | None = None
    termination_message_path: str | None = None
    termination_message_policy: str | None = None
    image_pull_policy: str | None = None
    security_context: SecurityContext | None = None
    stdin: bool | None = None
    stdin_once: bool | None = None
    tty: bool | None = None


class EphemeralContainer(K8sStruct):
    """Container fields (EphemeralContainerCommon, inlined) plus ``targetContainerName``."""

    name: str | None = None
    image: str | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    working_dir: str | None = None
    ports: list[ContainerPort] | None = None
    env_from: list[EnvFromSource] | None = None
    env: list[EnvVar] | None = None
    resources: ResourceRequirements | None = None
    resize_policy: list[ContainerResizePolicy] | None = None
    restart_policy: str | None = None
    volume_mounts: list[VolumeMount] | None = None
    volume_devices: list[VolumeDevice] | None = None
    liveness_probe: Probe | None = None
    readiness_probe: Probe | None = None
    startup_probe: Probe | None = None
    lifecycle: Lifecycle | None = None
    termination_message_path: str | None = None
    termination_message_policy: str | None = None
    image_pull_policy: str | None = None
    security_context: SecurityContext | None = None
    stdin: bool | None = None
    stdin_once: bool | None = None
    tty: bool | None = None
    target_container_name: str | None = None


# --------------------------------------------------------------------------
# Volumes


class KeyToPath(K8sStruct):
    key: str | None = None
    path: str | None = None
    mode: Int32 | None = None


class HostPathVolumeSource(K8sStruct):
    path: str | None = None
    type: str | None = None


class EmptyDirVolumeSource(K8sStruct):
    medium: str | None = None
    size_limit: Quantity | None = None


class GCEPersistentDiskVolumeSource(K8sStruct):
    pd_name: str | None = None
    fs_type: str | None = None
    partition: Int32 | None = None
    read_only: bool | None = None


class AWSElasticBlockStoreVolumeSource(K8sStruct):
    volume_id: str | None = msgspec.field(default=None, name="volumeID")
    fs_type: str | None = None
    partition: Int32 | None = None
    read_only: bool | None = None


class GitRepoVolumeSource(K8sStruct):
    repository: str | None = None
    revision: str | None = None
    directory: str | None = None


class SecretVolumeSource(K8sStruct):
    secret_name: str | None = None
    items: list[KeyToPath] | None = None
    default_mode: Int32 | None = None
    optional: bool | None = None


class NFSVolumeSource(K8sStruct):
    server: str | None = None
    path: str | None = None
    read_only: bool | None = None


class ISCSIVolumeSource(K8sStruct):
    target_portal: str | None = None
    iqn: str | None = None
    lun: Int32 | None = None
    iscsi_interface: str | None = None
    fs_type: str | None = None
    read_only: bool | None = None
    portals: list[str] | None = None
    chap_auth_discovery: bool | None = None
    chap_auth_session: bool | None = None
    secret_ref: LocalObjectReference | None = None
    initiator_name: str | None = None


class GlusterfsVolumeSource(K8sStruct):
    endpoints: str | None = None
    path: str | None = None
    read_only: bool | None = None


class PersistentVolumeClaimVolumeSource(K8sStruct):
    claim_name: str | None = None
    read_only: bool | None = None


class RBDVolumeSource(K8sStruct):
    monitors: list[str] | None = None
    image: str | None = None
    fs_type: str | None = None
    pool: str | None = None
    user: str | None = None
    keyring: str | None = None
    secret_ref: LocalObjectReference | None = None
    read_only: bool | None = None


class FlexVolumeSource(K8sStruct):
    driver: str | None = None
    fs_type: str | None = None
    secret_ref: LocalObjectReference | None = None
    read_only: bool | None = None
    options: dict[str, str] | None = None


class CinderVolumeSource(K8sStruct):
    volume_id: str | None = msgspec.field(default=None, name="volumeID")
    fs_type: str | None = None
    read_only: bool | None = None
    secret_ref: LocalObjectReference | None = None


class CephFSVolumeSource(K8sStruct):
    monitors: list[str] | None = None
    path: str | None = None
    user: str | None = None
    secret_file: str | None = None
    secret_ref: LocalObjectReference | None = None
    read_only: bool | None = None


class FlockerVolumeSource(K8sStruct):
    dataset_name: str | None = None
    dataset_uuid: str | None = msgspec.field(default=None, name="datasetUUID")


class DownwardAPIVolumeFile(K8sStruct):
    path: str | None = None
    field_ref: ObjectFieldSelector | None = None
    resource_field_ref: ResourceFieldSelector | None = None
    mode: Int32 | None = None


class DownwardAPIVolumeSource(K8sStruct):
    items: list[DownwardAPIVolumeFile] | None = None
    default_mode: Int32 | None = None


class FCVolumeSource(K8sStruct):
    target_wwns: list[str] | None = msgspec.field(default=None, name="targetWWNs")
    lun: Int32 | None = None
    fs_type: str | None = None
    read_only: bool | None = None
    wwids: list[str] | None = None


class AzureFileVolumeSource(K8sStruct):
    secret_name: str | None = None
    share_name: str | None = None
    read_only: bool | None = None


class ConfigMapVolumeSource(K8sStruct):
    name: str | None = None
    items: list[KeyToPath] | None = None
    default_mode: Int32 | None = None
    optional: bool | None = None


class VsphereVirtualDiskVolumeSource(K8sStruct):
    volume_path: str | None = None
    fs_type: str | None = None
    storage_policy_name: str | None = None
    storage_policy_id: str | None = msgspec.field(default=None, name="storagePolicyID")


class QuobyteVolumeSource(K8sStruct):
    registry: str | None = None
    volume: str | None = None
    read_only: bool | None = None
    user: str | None = None
    group: str | None = None
    tenant: str | None = None


class AzureDiskVolumeSource(K8sStruct):
    disk_name: str | None = None
    disk_uri: str | None = msgspec.field(default=None, name="diskURI")
    caching_mode: str | None = None
    fs_type: str | None = None
    read_only: bool | None = None
    kind: str | None = None


class PhotonPersistentDiskVolumeSource(K8sStruct):
    pd_id: str | None = msgspec.field(default=None, name="pdID")
    fs_type: str | None = None


class SecretProjection(K8sStruct):
    name: str | None = None
    items: list[KeyToPath] | None = None
    optional: bool | None = None


class ConfigMapProjection(K8sStruct):
    name: str | None = None
    items: list[KeyToPath] | None = None
    optional: bool | None = None


class DownwardAPIProjection(K8sStruct):
    items: list[DownwardAPIVolumeFile] | None = None


class ServiceAccountTokenProjection(K8sStruct):
    audience: str | None = None
    expiration_seconds: Int64 | None = None
    path: str | None = None


class ClusterTrustBundleProjection(K8sStruct):
    name: str | None = None
    signer_name: str | None = None
    label_selector: LabelSelector | None = None
    optional: bool | None = None
    path: str | None = None


class VolumeProjection(K8sStruct):
    secret: SecretProjection | None = None
    downward_api: DownwardAPIProjection | None = msgspec.field(default=None, name="downwardAPI")
    config_map: ConfigMapProjection | None = None
    service_account_token: ServiceAccountTokenProjection | None = None
    cluster_trust_bundle: ClusterTrustBundleProjection | None = None


class ProjectedVolumeSource(K8sStruct):
    sources: list[VolumeProjection] | None = None
    default_mode: Int32 | None = None


class PortworxVolumeSource(K8sStruct):
    volume_id: str | None = msgspec.field(default=None, name="volumeID")
    fs_type: str | None = None
    read_only: bool | None = None


class ScaleIOVolumeSource(K8sStruct):
    gateway: str | None = None
    system: str | None = None
    secret_ref: LocalObjectReference | None = None
    ssl_enabled: bool | None = None
    protection_domain: str | None = None
    storage_pool: str | None = None
    storage_mode: str | None = None
    volume_name: str | None = None
    fs_type: str | None = None
    read_only: bool | None = None


class StorageOSVolumeSource(K8sStruct):
    volume_name: str | None = None
    volume_namespace: str | None = None
    fs_type: str | None = None
    read_only: bool | None = None
    secret_ref: LocalObjectReference | None = None


class CSIVolumeSource(K8sStruct):
    driver: str | None = None
    read_only: bool | None = None
    fs_type: str | None = None
    volume_attributes: dict[str, str] | None = None
    node_publish_secret_ref: LocalObjectReference | None = None


class VolumeResourceRequirements(K8sStruct):
    limits: ResourceList | None = None
    requests: ResourceList | None = None


class PersistentVolumeClaimSpec(K8sStruct):
    access_modes: list[str] | None = None
    selector: LabelSelector | None = None
    resources: VolumeResourceRequirements | None = None
    volume_name: str | None = None
    storage_class_name: str | None = None
    volume_mode: str | None = None
    data_source: TypedLocalObjectReference | None = None
    data_source_ref: TypedObjectReference | None = None
    volume_attributes_class_name: str | None = None


class PersistentVolumeClaimTemplate(K8sStruct):
    metadata: ObjectMeta | None = None
    spec: PersistentVolumeClaimSpec | None = None


class EphemeralVolumeSource(K8sStruct):
    volume_claim_template: PersistentVolumeClaimTemplate | None = None


class ImageVolumeSource(K8sStruct):
    reference: str | None = None
    pull_policy: str | None = None


class Volume(K8sStruct):
    """A pod volume: its name plus exactly one source (VolumeSource, inlined)."""

    name: str | None = None
    host_path: HostPathVolumeSource | None = None
    empty_dir: EmptyDirVolumeSource | None = None
    gce_persistent_disk: GCEPersistentDiskVolumeSource | None = None
    aws_elastic_block_store: AWSElasticBlockStoreVolumeSource | None = None
    git_repo: GitRepoVolumeSource | None = None
    secret: SecretVolumeSource | None = None
    nfs: NFSVolumeSource | None = None
    iscsi: ISCSIVolumeSource | None = None
    glusterfs: GlusterfsVolumeSource | None = None
    persistent_volume_claim: PersistentVolumeClaimVolumeSource | None = None
    rbd: RBDVolumeSource | None = None
    flex_volume: FlexVolumeSource | None = None
    cinder: CinderVolumeSource | None = None
    cephfs: CephFSVolumeSource | None = None
    flocker: FlockerVolumeSource | None = None
    downward_api: DownwardAPIVolumeSource | None = msgspec.field(default=None, name="downwardAPI")
    fc: FCVolumeSource | None = None
    azure_file: AzureFileVolumeSource | None = None
    config_map: ConfigMapVolumeSource | None = None
    vsphere_volume: VsphereVirtualDiskVolumeSource | None = None
    quobyte: QuobyteVolumeSource | None = None
    azure_disk: AzureDiskVolumeSource | None = None
    photon_persistent_disk: PhotonPersistentDiskVolumeSource | None = None
    projected: ProjectedVolumeSource | None = None
    portworx_volume: PortworxVolumeSource | None = None
    scale_io: ScaleIOVolumeSource | None = msgspec.field(default=None, name="scaleIO")
    storageos: StorageOSVolumeSource | None = None
    csi: CSIVolumeSource | None = None
    ephemeral: EphemeralVolumeSource | None = None
    image: ImageVolumeSource | None = None


# --------------------------------------------------------------------------
# Pod


class Sysctl(K8sStruct):
    name: str | None = None
    value: str | None = None


class PodSecurityContext(K8sStruct):
    se_linux_options: SELinuxOptions | None = None
    windows_options: WindowsSecurityContextOptions | None = None
    run_as_user: Int64 | None = None
    run_as_group: Int64 | None = None
    run_as_non_root: bool | None = None
    supplemental_groups: list[Int64] | None = None
    supplemental_groups_policy: str | None = None
    fs_group: Int64 | None = None
    sysctls: list[Sysctl] | None = None
    fs_group_change_policy: str | None = None
    seccomp_profile: SeccompProfile | None = None
    app_armor_profile: AppArmorProfile | None = None


class HostAlias(K8sStruct):
    ip: str | None = None
    hostnames: list[str] | None = None


class PodDNSConfigOption(K8sStruct):
    name: str | None = None
    value: str | None = None


class PodDNSConfig(K8sStruct):
    nameservers: list[str] | None = None
    searches: list[str] | None = None
    options: list[PodDNSConfigOption] | None = None


class PodReadinessGate(K8sStruct):
    condition_type: str | None = None


class PodOS(K8sStruct):
    name: str | None = None


class PodSchedulingGate(K8sStruct):
    name: str | None = None


class PodResourceClaim(K8sStruct):
    """``spec.resourceClaims[]``: a claim by name, or a template to generate one from."""

    name: str | None = None
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class PodSpec(K8sStruct):
    volumes: list[Volume] | None = None
    init_containers: list[Container] | None = None
    containers: list[Container] | None = None
    ephemeral_containers: list[EphemeralContainer] | None = None
    restart_policy: str | None = None
    termination_grace_period_seconds: Int64 | None = None
    active_deadline_seconds: Int64 | None = None
    dns_policy: str | None = None
    node_selector: dict[str, str] | None = None
    service_account_name: str | None = None
    service_account: str | None = None
    automount_service_account_token: bool | None = None
    node_name: str | None = None
    host_network: bool | None = None
    host_pid: bool | None = msgspec.field(default=None, name="hostPID")
    host_ipc: bool | None = msgspec.field(default=None, name="hostIPC")
    share_process_namespace: bool | None = None
    security_context: PodSecurityContext | None = None
    image_pull_secrets: list[LocalObjectReference] | None = None
    hostname: str | None = None
    subdomain: str | None = None
    affinity: Affinity | None = None
    scheduler_name: str | None = None
    tolerations: list[Toleration] | None = None
    host_aliases: list[HostAlias] | None = None
    priority_class_name: str | None = None
    priority: Int32 | None = None
    dns_config: PodDNSConfig | None = None
    readiness_gates: list[PodReadinessGate] | None = None
    runtime_class_name: str | None = None
    enable_service_links: bool | None = None
    preemption_policy: str | None = None
    overhead: ResourceList | None = None
    topology_spread_constraints: list[TopologySpreadConstraint] | None = None
    set_hostname_as_fqdn: bool | None = msgspec.field(default=None, name="setHostnameAsFQDN")
    os: PodOS | None = None
    host_users: bool | None = None
    scheduling_gates: list[PodSchedulingGate] | None = None
    resource_claims: list[PodResourceClaim] | None = None


class PodCondition(K8sStruct):
    type: str | None = None
    status: str | None = None
    last_probe_time: Time | None = None
    last_transition_time: Time | None = None
    reason: str | None = None
    message: str | None = None


class HostIP(K8sStruct):
    ip: str | None = None


class PodIP(K8sStruct):
    ip: str | None = None


class ContainerStateWaiting(K8sStruct):
    reason: str | None = None
    message: str | None = None


class ContainerStateRunning(K8sStruct):
    started_at: Time | None = None


class ContainerStateTerminated(K8sStruct):
    exit_code: Int32 | None = None
    signal: Int32 | None = None
    reason: str | None = None
    message: str | None = None
    started_at: Time | None = None
    finished_at: Time | None = None
    container_id: str | None = msgspec.field(default=None, name="containerID")


class ContainerState(K8sStruct):
    waiting: ContainerStateWaiting | None = None
    running: ContainerStateRunning | None = None
    terminated: ContainerStateTerminated | None = None


class VolumeMountStatus(K8sStruct):
    name: str | None = None
    mount_path: str | None = None
    read_only: bool | None = None
    recursive_read_only: str | None = None


class LinuxContainerUser(K8sStruct):
    uid: Int64 | None = None
    gid: Int64 | None = None
    supplemental_groups: list[Int64] | None = None


class ContainerUser(K8sStruct):
    linux: LinuxContainerUser | None = None


class ResourceHealth(K8sStruct):
    resource_id: str | None = msgspec.field(default=None, name="resourceID")
    health: str | None = None


class ResourceStatus(K8sStruct):
    name: str | None = None
    resources: list[ResourceHealth] | None = None


class ContainerStatus(K8sStruct):
    name: str | None = None
    state: ContainerState | None = None
    last_state: ContainerState | None = None
    ready: bool | None = None
    restart_count: Int32 | None = None
    image: str | None = None
    image_id: str | None = msgspec.field(default=None, name="imageID")
    container_id: str | None = msgspec.field(default=None, name="containerID")
    started: bool | None = None
    allocated_resources: ResourceList | None = None
    resources: ResourceRequirements | None = None
    volume_mounts: list[VolumeMountStatus] | None = None
    user: ContainerUser | None = None
    allocated_resources_status: list[ResourceStatus] | None = None


class PodResourceClaimStatus(K8sStruct):
    """``status.resourceClaimStatuses[]``: the generated claim name for a pod claim."""

    name: str | None = None
    resource_claim_name: str | None = None


class PodStatus(K8sStruct):
    phase: str | None = None
    conditions: list[PodCondition] | None = None
    message: str | None = None
    reason: str | None = None
    nominated_node_name: str | None = None
    host_ip: str | None = msgspec.field(default=None, name="hostIP")
    host_ips: list[HostIP] | None = msgspec.field(default=None, name="hostIPs")
    pod_ip: str | None = msgspec.field(default=None, name="podIP")
    pod_ips: list[PodIP] | None = msgspec.field(default=None, name="podIPs")
    start_time: Time | None = None
    init_container_statuses: list[ContainerStatus] | None = None
    container_statuses: list[ContainerStatus] | None = None
    qos_class: str | None = None
    ephemeral_container_statuses: list[ContainerStatus] | None = None
    resize: str | None = None
    resource_claim_statuses: list[PodResourceClaimStatus] | None = None


class Pod(K8sStruct):
    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta | None = None
    spec: PodSpec | None = None
    status: PodStatus | None = None


class Binding(K8sStruct):
    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta | None = None
    target: ObjectReference | None = None


# --------------------------------------------------------------------------
# Node


class ConfigMapNodeConfigSource(K8sStruct):
    namespace: str | None = None
    name: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    kubelet_config_key: str | None = None


class NodeConfigSource(K8sStruct):
    config_map: ConfigMapNodeConfigSource | None = None


class NodeSpec(K8sStruct):
    pod_cidr: str | None = msgspec.field(default=None, name="podCIDR")
    pod_cidrs: list[str] | None = msgspec.field(default=None, name="podCIDRs")
    provider_id: str | None = msgspec.field(default=None, name="providerID")
    unschedulable: bool | None = None
    taints: list[Taint] | None = None
    config_source: NodeConfigSource | None = None
    external_id: str | None = msgspec.field(default=None, name="externalID")


class NodeCondition(K8sStruct):
    type: str | None = None
    status: str | None = None
    last_heartbeat_time: Time | None = None
    last_transition_time: Time | None = None
    reason: str | None = None
    message: str | None = None


class NodeAddress(K8sStruct):
    type: str | None = None
    address: str | None = None


class DaemonEndpoint(K8sStruct):
    port: Int32 | None = msgspec.field(default=None, name="Port")


class NodeDaemonEndpoints(K8sStruct):
    kubelet_endpoint: DaemonEndpoint | None = None


class NodeSystemInfo(K8sStruct):
    machine_id: str | None = msgspec.field(default=None, name="machineID")
    system_uuid: str | None = msgspec.field(default=None, name="systemUUID")
    boot_id: str | None = msgspec.field(default=None, name="bootID")
    kernel_version: str | None = None
    os_image: str | None = None
    container_runtime_version: str | None = None
    kubelet_version: str | None = None
    kube_proxy_version: str | None = None
    operating_system: str | None = None
    architecture: str | None = None


class ContainerImage(K8sStruct):
    names: list[str] | None = None
    size_bytes: Int64 | None = None


class AttachedVolume(K8sStruct):
    name: str | None = None
    device_path: str | None = None


class NodeConfigStatus(K8sStruct):
    assigned: NodeConfigSource | None = None
    active: NodeConfigSource | None = None
    last_known_good: NodeConfigSource | None = None
    error: str | None = None


class NodeRuntimeHandlerFeatures(K8sStruct):
    recursive_read_only_mounts: bool | None = None
    user_namespaces: bool | None = None


class NodeRuntimeHandler(K8sStruct):
    name: str | None = None
    features: NodeRuntimeHandlerFeatures | None = None


class NodeFeatures(K8sStruct):
    supplemental_groups_policy: bool | None = None


class NodeStatus(K8sStruct):
    capacity: ResourceList | None = None
    allocatable: ResourceList | None = None
    phase: str | None = None
    conditions: list[NodeCondition] | None = None
    addresses: list[NodeAddress] | None = None
    daemon_endpoints: NodeDaemonEndpoints | None = None
    node_info: NodeSystemInfo | None = None
    images: list[ContainerImage] | None = None
    volumes_in_use: list[str] | None = None
    volumes_attached: list[AttachedVolume] | None = None
    config: NodeConfigStatus | None = None
    runtime_handlers: list[NodeRuntimeHandler] | None = None
    features: NodeFeatures | None = None


class Node(K8sStruct):
    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta | None = None
    spec: NodeSpec | None = None
    status: NodeStatus | None = None


# --------------------------------------------------------------------------
# Namespace


class NamespaceSpec(K8sStruct):
    finalizers: list[str] | None = None


class NamespaceCondition(K8sStruct):
    type: str | None = None
    status: str | None = None
    last_transition_time: Time | None = None
    reason: str | None = None
    message: str | None = None


class NamespaceStatus(K8sStruct):
    phase: str | None = None
    conditions: list[NamespaceCondition] | None = None


class Namespace(K8sStruct):
    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta | None = None
    spec: NamespaceSpec | None = None
    status: NamespaceStatus | None = None


# --------------------------------------------------------------------------
# Event (core/v1)


class EventSource(K8sStruct):
    component: str | None = None
    host: str | None = None


class EventSeries(K8sStruct):
    count: Int32 | None = None
    last_observed_time: MicroTime | None = None


class Event(K8sStruct):
    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta | None = None
    involved_object: ObjectReference | None = None
    reason: str | None = None
    message: str | None = None
    source: EventSource | None = None
    first_timestamp: Time | None = None
    last_timestamp: Time | None = None
    count: Int32 | None = None
    type: str | None = None
    event_time: MicroTime | None = None
    series: EventSeries | None = None
    action: str | None = None
    related: ObjectReference | None = None
    reporting_component: str | None = None
    reporting_instance: str | None = None
