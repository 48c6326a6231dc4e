"""The length of the common run of two sliceable sequences (bytes, lists of lines) from given
offsets, by galloping then bisecting: every comparison is one C-level slice comparison, so a run
of a million equal bytes or lines costs a few dozen of them. Used by the delta encoder and the merge."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


def common_run(
    a: Sequence[object] | bytes,
    i: int,
    b: Sequence[object] | bytes,
    j: int,
    limit: int,
    first_step: int = 1,
) -> int:
    """Length of the common run of ``a[i:]`` and ``b[j:]``, at most ``limit``."""
    if limit <= 0 or a[i] != b[j]:
        return 0
    good, step = 1, first_step
    while good < limit:
        step = min(step * 2, limit - good)
        if a[i + good : i + good + step] == b[j + good : j + good + step]:
            good += step
        else:
            lo, hi = good, good + step - 1  # the first mismatch lies in [lo, hi]
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if a[i + lo : i + mid] == b[j + lo : j + mid]:
                    lo = mid
                else:
                    hi = mid - 1
            return lo
    return good


def common_run_before(
    a: Sequence[object] | bytes,
    i: int,
    b: Sequence[object] | bytes,
    j: int,
    limit: int,
    first_step: int = 1,
) -> int:
    """Length of the common run ending just before ``a[i]`` and ``b[j]``, at most ``limit``."""
    if limit <= 0 or a[i - 1] != b[j - 1]:
        return 0
    good, step = 1, first_step
    while good < limit:
        step = min(step * 2, limit - good)
        if a[i - good - step : i - good] == b[j - good - step : j - good]:
            good += step
        else:
            lo, hi = good, good + step - 1
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if a[i - mid : i - lo] == b[j - mid : j - lo]:
                    lo = mid
                else:
                    hi = mid - 1
            return lo
    return good
