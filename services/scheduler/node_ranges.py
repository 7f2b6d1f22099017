"""Node names as range expressions: ``scheduler-perf-dra-[0000-0497,0499]``.

Decision records list the nodes a scheduling attempt rejected (`rejections`).
On a cluster whose nodes are numbered, as kind's, scheduler_perf's and many
node pools' are, nearly every node of a large cluster shares one verdict, and
listing each name made a record of a 500-node cluster 14 KB: a third of the
bytes a steady-state pod wrote to the log (docs/decisions/latency.md,
"Nineteenth pass"). A range expression names the same nodes in a few bytes.

The form is Slurm's hostlist: a prefix, then in brackets comma-separated
numbers and ``first-last`` ranges, every number with the same count of digits
(zero-padded). A node name cannot hold ``[`` (a DNS subdomain), so an
expression cannot be mistaken for a name.

``compact`` is lossless and cheap on the scheduler's path: it only tries
names that are one prefix plus digits of one width, finds the runs by binary
search (a few ``int`` calls per run), and gives up when the runs would not
save much.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

MIN_NAMES = 8  # fewer names are listed as they are
MAX_RUN_SHARE = 4  # compact only when there are at most 1/4 as many runs as names
MAX_EXPANDED = 1_000_000  # names one expression may stand for when read (a cluster has at most tens of thousands)


def compact(names: Sequence[str]) -> str | None:
    """One range expression for ``names`` (sorted, unique), or None when they are listed better as they are."""
    count = len(names)
    if count < MIN_NAMES:
        return None
    low, high = names[0], names[-1]
    lengths = set(map(len, names))
    if len(lengths) != 1:
        return None  # n-10, n-100, n-2 sort so; only names of one length sort as their numbers do
    cut = 0  # the prefix all share (sorted: that of the first and the last)
    while cut < len(low) and low[cut] == high[cut]:
        cut += 1
    while cut and low[cut - 1].isdigit():  # all the digits in brackets: node-[0098-0100], not node-0[098-100]
        cut -= 1
    prefix = low[:cut]
    width = len(low) - cut
    if width == 0:
        return None
    # Every name is the prefix and ``width`` characters: column t of the names' tails is
    # joined[cut + t :: length]. Cheaper than a slice per name (this runs in every cycle).
    length = cut + width
    joined = "".join(names)
    columns = "".join([joined[cut + t :: length] for t in range(width)])
    if not (columns.isascii() and columns.isdigit()):
        return None
    # One width and sorted: as strings and as numbers the order is the same.
    runs: list[tuple[int, int]] = []
    first = 0
    while first < count:
        start = int(names[first][cut:])
        lo, hi = first, count - 1
        # The run from ``first`` ends at the last index whose number is ``start`` plus its distance.
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if int(names[mid][cut:]) - start == mid - first:
                lo = mid
            else:
                hi = mid - 1
        runs.append((start, start + lo - first))
        if len(runs) * MAX_RUN_SHARE > count:
            return None
        first = lo + 1
    parts = (f"{a:0{width}d}" if a == b else f"{a:0{width}d}-{b:0{width}d}" for a, b in runs)
    return f"{prefix}[{','.join(parts)}]"


class BadExpression(ValueError):
    pass


def expand(expression: str) -> Iterator[str]:
    """The node names of a range expression (a plain name: itself)."""
    if not expression.endswith("]") or "[" not in expression:
        yield expression
        return
    prefix, _, body = expression[:-1].partition("[")
    ranges: list[tuple[int, int, int]] = []
    total = 0
    for part in body.split(","):
        first, _, last = part.partition("-")
        last = last or first
        width = len(first)
        if not (_digits(first) and _digits(last) and len(last) == width and int(first) <= int(last)):
            raise BadExpression(f"bad node range {part!r} in {expression!r}")
        total += int(last) - int(first) + 1
        if total > MAX_EXPANDED:
            raise BadExpression(f"{expression[:80]!r} stands for more than {MAX_EXPANDED} nodes")
        ranges.append((int(first), int(last), width))
    for first_number, last_number, width in ranges:
        for number in range(first_number, last_number + 1):
            yield f"{prefix}{number:0{width}d}"


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()
