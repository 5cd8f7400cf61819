"""Gate margins (min_delta, max_drop) are sizes: a negative one means the other field, and the error says which."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationInfo
from pydantic_core import PydanticCustomError


def no_negative_margin(value: Any, info: ValidationInfo) -> Any:
    """min_delta and max_drop are sizes of a change in the harmful/helpful direction; a sign flip means the other.

    A negative min_delta would count a drop as an improvement (with require: lower_bound it releases a
    worse checkpoint); tolerating a drop is what a regression gate's max_drop says, and requiring a gain
    is what min_delta says. Raised before the `ge=0` bound so the message says which to use.
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or value >= 0:
        return value
    metric = info.data.get("metric", "the metric")
    primary = (info.config or {}).get("title") == "PrimaryGate"
    if info.field_name == "min_delta":
        raise PydanticCustomError(
            "negative_margin", "min_delta is the smallest improvement that counts, so it cannot be negative "
            "({value} would count a drop as an improvement)",
            {"value": value, "fix": f"write min_delta: 0 or more; to tolerate a drop of up to {-value:g}, use a "
                                    f"regression gate: regression: [{{metric: {metric}, max_drop: {-value:g}}}]"})
    gain = f"set min_delta: {-value:g}" if primary else "make the metric the primary gate's min_delta"
    raise PydanticCustomError(
        "negative_margin", "max_drop is the largest tolerated drop, so it cannot be negative",
        {"value": value, "fix": f"write max_drop: 0 or more; to require an improvement of at least {-value:g}, {gain}"})

