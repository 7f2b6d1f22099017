"""The FailedScheduling message, exactly as kube-scheduler 1.31 formats FitError."""

from __future__ import annotations

from services.scheduler.messages import fit_error_message
from services.scheduler.status import Code, new_status

TAINT = new_status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint {node-role: x}")
CPU = new_status(Code.UNSCHEDULABLE, "Insufficient cpu")
CPU_MEM = new_status(Code.UNSCHEDULABLE, "Insufficient cpu", "Insufficient memory")


def test_filter_histogram_and_preemption_suffix() -> None:
    message = fit_error_message(
        3,
        {"a": TAINT, "b": CPU, "c": CPU},
        post_filter_msg="preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
    )
    assert message == (
        "0/3 nodes are available: 1 node(s) had untolerated taint {node-role: x}, 2 Insufficient cpu. "
        "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    )


def test_every_reason_of_a_status_counts() -> None:
    assert fit_error_message(2, {"a": CPU_MEM, "b": CPU}) == (
        "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu."
    )


def test_histogram_is_sorted_as_strings() -> None:
    statuses = {f"n{i}": CPU for i in range(10)} | {"x": TAINT, "y": TAINT}
    assert fit_error_message(12, statuses) == (
        "0/12 nodes are available: 10 Insufficient cpu, 2 node(s) had untolerated taint {node-role: x}."
    )


def test_pre_filter_message_replaces_histogram() -> None:
    status = new_status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "resourceclaim depends on disabled DRAControlPlaneController feature"
    )
    message = fit_error_message(
        1,
        {"worker": status},
        pre_filter_msg=status.message(),
        post_filter_msg=(
            "no new claims to deallocate, preemption: 0/1 nodes are available: "
            "1 Preemption is not helpful for scheduling."
        ),
    )
    assert message == (
        "0/1 nodes are available: resourceclaim depends on disabled DRAControlPlaneController feature. "
        "no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )


def test_without_post_filter() -> None:
    assert fit_error_message(1, {"a": CPU}) == "0/1 nodes are available: 1 Insufficient cpu."
